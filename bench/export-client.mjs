// The export bench's client (bench/export.ts): GETs one URL in a process of its own and consumes
// every byte, then prints one JSON line { seconds, firstByteSeconds, bytes, status, rows, cpuSeconds }.
//
// Plain JavaScript run by `node` itself, not from the bench's own process: reading the 2.5 GB
// export there cost 7-13 s of CPU (curl: 1.1 s) on the same two cores as the export it was
// measuring, and made the export look 25% slower than it is.
import http from 'node:http';

const [url] = process.argv.slice(2);
const t0 = process.hrtime.bigint();
const cpu0 = process.cpuUsage();
const seconds = () => Number(process.hrtime.bigint() - t0) / 1e9;

const req = http.get(url, { agent: false }, (res) => {
  let firstByteSeconds = NaN;
  let bytes = 0;
  res.on('data', (chunk) => {
    if (bytes === 0) firstByteSeconds = seconds();
    bytes += chunk.length;
  });
  // 'end' only on a clean end (terminating chunk); a failed export cuts the connection.
  res.on('end', () => {
    const cpu = process.cpuUsage(cpu0);
    process.stdout.write(`${JSON.stringify({
      seconds: seconds(),
      firstByteSeconds,
      bytes,
      status: res.statusCode ?? 0,
      rows: Number(res.trailers['x-export-rows'] ?? res.headers['x-export-rows']),
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
    })}\n`);
  });
  res.on('aborted', () => fail('export transfer failed (connection cut)'));
  res.on('error', (err) => fail(err.message));
});
req.on('error', (err) => fail(err.message));

function fail(message) {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}
