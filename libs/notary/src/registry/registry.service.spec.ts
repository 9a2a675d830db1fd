import { openTestStore } from '../../../../test/support/test-store';
import { registryMigrations } from './registry.migrations';
import { RegistryQuery, RegistryService } from './registry.service';
import { RegistryReadModel } from './registry-read-model.repository';

describe('RegistryService listings (on the real store)', () => {
  let t: Awaited<ReturnType<typeof openTestStore>>;
  let sut: RegistryService;
  beforeEach(async () => {
    t = await openTestStore(registryMigrations);
    sut = new RegistryService(new RegistryReadModel(t.db), 'http://sigil.test');
  });
  afterEach(() => t?.dispose());

  /** `n` public certified outputs in climate, one second apart, newest first by i; `words(i)` is each one's text. */
  const insert = (n: number, words: (i: number) => string, from = 0) =>
    t.db.query(
      `INSERT INTO registry_entries (id, org_id, slug, title, summary, artifact_type, status, certificate_id, artifact_hash, rows_count,
                                     industry, tags, visibility, created_at, updated_at)
       SELECT 'e' || lpad(i::text, 6, '0'), 'org_a', 'entry-' || i, w, NULL, 'output', 'certified', NULL, NULL, NULL,
              'climate', '{}', 'public', timestamptz '2026-01-01' + (i || ' seconds')::interval, now()
       FROM unnest($1::int[], $2::text[]) AS x(i, w)`,
      [Array.from({ length: n }, (_, k) => from + k), Array.from({ length: n }, (_, k) => words(from + k))],
    );
  const q = (over: Partial<RegistryQuery> = {}): RegistryQuery => ({ visibility: 'public', limit: 50, ...over });

  it('answers from its kept page only while nothing changed: inserts, edits and deletes show at once', async () => {
    await insert(5, (i) => `river gauge ${i}`);
    const first = await sut.list(q({ q: 'river' }));
    expect(first.total).toBe(5);
    expect(await sut.list(q({ q: 'river' }))).toBe(first); // the kept page itself

    await insert(1, () => 'river delta', 5);
    const afterInsert = await sut.list(q({ q: 'river' }));
    expect(afterInsert.total).toBe(6);
    expect(afterInsert.items[0]).toMatchObject({ id: 'e000005', title: 'river delta' });

    // The search follows the title (the table computes it), so a renamed entry still matching shows renamed.
    await t.db.query(`UPDATE registry_entries SET title = 'river renamed' WHERE id = 'e000005'`);
    expect((await sut.list(q({ q: 'river' }))).items[0].title).toBe('river renamed');
    await t.db.query(`DELETE FROM registry_entries WHERE id = 'e000005'`);
    expect((await sut.list(q({ q: 'river' }))).total).toBe(5);
    expect(JSON.parse((await sut.listJson(q({ q: 'river' }))).toString('utf8'))).toMatchObject({ total: 5, next_cursor: null });
  });

  it('finds text matches past the first entries in page order, with exact totals and cursors', async () => {
    // 2,500 entries; "rare" only on the 3 oldest, "common" on every other one.
    await insert(2500, (i) => `${i < 3 ? 'rare ' : ''}${i % 2 === 0 ? 'common' : 'plain'} item ${i}`);
    const rare = await sut.list(q({ q: 'rare', industry: 'climate', status: 'certified', artifact_type: 'output' }));
    expect(rare.total).toBe(3);
    expect(rare.items.map((i) => i.id)).toEqual(['e000002', 'e000001', 'e000000']);
    expect(rare.next_cursor).toBeNull();

    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 3; page++) {
      const p = await sut.list(q({ q: 'common', limit: 200, cursor }));
      expect(p.total).toBe(1250);
      seen.push(...p.items.map((i) => i.id));
      cursor = p.next_cursor!;
    }
    const expected = Array.from({ length: 600 }, (_, k) => `e${String(2498 - 2 * k).padStart(6, '0')}`);
    expect(seen).toEqual(expected);

    // The next page reuses the counted total, unless the registry moved in between.
    await insert(1, () => 'common newest', 2500);
    const next = await sut.list(q({ q: 'common', limit: 200, cursor }));
    expect(next.total).toBe(1251);
    expect(next.items[0].id).toBe('e001298');
  });

  describe('statements per listing', () => {
    let readModel: RegistryReadModel;
    let calls: { walk: boolean; count: boolean }[];
    /** Runs before each statement the service asks for. */
    let beforeStatement: (how: { walk: boolean; count: boolean }) => Promise<unknown>;
    beforeEach(() => {
      readModel = new RegistryReadModel(t.db);
      sut = new RegistryService(readModel, 'http://sigil.test');
      calls = [];
      beforeStatement = async () => undefined;
      const page = readModel.page.bind(readModel);
      jest.spyOn(readModel, 'page').mockImplementation(async (query, orgId, cursor, how) => {
        calls.push(how);
        await beforeStatement(how);
        return page(query, orgId, cursor, how);
      });
    });
    const filtered = (text: string) => q({ q: text, industry: 'climate', status: 'certified', artifact_type: 'output' });

    it('answers a listing that matches nothing, or whose matches the walk all found, in one statement', async () => {
      await insert(2500, (i) => `${i >= 2490 ? 'fresh ' : ''}item ${i}`);
      const versionChecks = jest.spyOn(readModel, 'version');
      expect(await sut.list(filtered('absent'))).toEqual({ items: [], total: 0, next_cursor: null });
      expect(calls).toEqual([{ walk: true, count: true }]);
      // Never asked before: no version check first (the statement reads the version); asked again: one check, no statement.
      expect(versionChecks).not.toHaveBeenCalled();
      calls.length = 0;
      await sut.list(filtered('absent'));
      expect(versionChecks).toHaveBeenCalledTimes(1);
      expect(calls).toEqual([]);

      // A later page of a listing that matches nothing: also one statement.
      calls.length = 0;
      const cursor = Buffer.from(JSON.stringify(['2026-01-01T00:10:00.000Z', 'z'])).toString('base64url');
      expect(await sut.list({ ...filtered('nowhere'), cursor })).toEqual({ items: [], total: 0, next_cursor: null });
      expect(calls).toEqual([{ walk: true, count: true }]);

      calls.length = 0;
      const fresh = await sut.list(filtered('fresh'));
      expect(fresh.total).toBe(10);
      expect(fresh.items.map((i) => i.id)).toEqual(Array.from({ length: 10 }, (_, k) => `e${String(2499 - k).padStart(6, '0')}`));
      expect(calls).toEqual([{ walk: true, count: true }]);
    });

    it('asks the planner for matches past the walk without counting them again, unless the registry moved in between', async () => {
      await insert(2500, (i) => `${i < 3 ? 'rare ' : ''}item ${i}`);
      const rare = await sut.list(filtered('rare'));
      expect(rare.total).toBe(3);
      expect(rare.items.map((i) => i.id)).toEqual(['e000002', 'e000001', 'e000000']);
      expect(calls).toEqual([
        { walk: true, count: true },
        { walk: false, count: false },
      ]);

      // A matching entry lands between the walk and the planner's page: the page shows it, and the total is counted again to agree.
      calls.length = 0;
      let landed = false;
      beforeStatement = async (how) => {
        if (!how.walk && !landed) {
          landed = true;
          await insert(1, () => 'rare late', 2500);
        }
      };
      const moved = await new RegistryService(readModel, 'http://sigil.test').list(filtered('rare')); // nothing kept yet
      expect(moved.total).toBe(4);
      expect(moved.items.map((i) => i.id)).toEqual(['e002500', 'e000002', 'e000001', 'e000000']);
      expect(calls).toEqual([
        { walk: true, count: true },
        { walk: false, count: false },
        { walk: false, count: true },
      ]);
    });
  });
});
