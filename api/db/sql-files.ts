/**
 * The API's SQL lives in `sql/api/<name>.sql` (one concern per file), loaded once and cached by
 * the project's one SQL loader. Files select from the snapshot's views by unqualified table name;
 * the snapshot reader sets the connection's schema to the pinned snapshot before running them.
 */
import { sqlFile } from '../../pipeline/warehouse/sql-files.ts';

const NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** The text of `sql/api/<name>.sql`. */
export function loadSql(name: string): string {
  if (!NAME.test(name)) throw new Error(`invalid SQL file name: ${name}`);
  return sqlFile(`api/${name}.sql`);
}
