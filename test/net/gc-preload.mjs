// Preloaded into a CLI process by test/net/sync-deadline.test.ts (node --expose-gc --import):
// a full garbage collection every 300 ms, so a deadline that can be collected before it fires
// is collected for sure (see test/net/gc-pressure.ts). The timer never keeps the process alive.
setInterval(() => globalThis.gc(), 300).unref();
