import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Metrics } from './metrics';

const root = join(__dirname, '../../..');
const registered = new Metrics().registry.getMetricsAsArray().map((m) => m.name);
const base = (name: string) => name.replace(/_(bucket|count|sum)$/, '');

/** The README's metric table and the Grafana dashboard stay true to the registry. */
describe('metrics documentation', () => {
  it('documents every sigil_ metric in the README, and no other', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('### Metrics'), readme.indexOf('## Access: keys, lanes, limits'));
    const documented = new Set([...section.matchAll(/`(sigil_[a-z_]+)`/g)].map((m) => m[1]));
    expect([...documented].sort()).toEqual(registered.filter((n) => n.startsWith('sigil_')).sort());
  });

  it('charts only metrics the registry has', () => {
    const dashboard = JSON.parse(readFileSync(join(root, 'docs/grafana/sigil-dashboard.json'), 'utf8'));
    const exprs: string[] = dashboard.panels.flatMap((p: { targets?: { expr: string }[] }) => (p.targets ?? []).map((t) => t.expr));
    expect(exprs.length).toBeGreaterThan(15);
    const used = new Set(exprs.flatMap((e) => [...e.matchAll(/\b((?:sigil|process|nodejs)_[a-z0-9_]+)\b/g)].map((m) => base(m[1]))));
    for (const name of used) expect(registered).toContain(name);
    // Every sigil_ metric has a panel.
    for (const name of registered.filter((n) => n.startsWith('sigil_'))) expect(used).toContain(name);
  });
});
