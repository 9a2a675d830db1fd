import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataDirInUse, PgliteDatabase } from './pglite-database';

describe('PgliteDatabase data directory', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'sigil-lock-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a directory another live process holds, and keeps data across reopen', async () => {
    writeFileSync(join(dir, 'sigil.lock'), String(process.ppid));
    await expect(PgliteDatabase.open(dir)).rejects.toBeInstanceOf(DataDirInUse);

    rmSync(join(dir, 'sigil.lock'));
    const db = await PgliteDatabase.open(dir);
    await db.exec('CREATE TABLE t (x int); INSERT INTO t VALUES (42)');
    await db.close();
    const again = await PgliteDatabase.open(dir);
    expect(await again.query('SELECT x FROM t')).toEqual([{ x: 42 }]);
    await again.close();
  });

  it('takes over a lock left by a process that died', async () => {
    writeFileSync(join(dir, 'sigil.lock'), '999999999');
    const db = await PgliteDatabase.open(dir);
    await db.close();
  });
});
