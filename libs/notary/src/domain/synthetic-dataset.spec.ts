import { syntheticDataset } from './synthetic-dataset';

describe('synthetic sandbox dataset', () => {
  it('is CSV with a header and the asked rows, the same for the same seed and different for another', () => {
    const a = syntheticDataset(42);
    expect(a.content.split('\n')[0]).toBe('date,station,temperature_c,rainfall_mm');
    expect(a.content.trimEnd().split('\n')).toHaveLength(25);
    expect(a.rows).toBe(24);
    expect(syntheticDataset(42)).toEqual(a);
    expect(syntheticDataset(43).content).not.toBe(a.content);
    expect(a.filename).toBe('sandbox-weather-0000002a.csv');
    for (const line of a.content.trimEnd().split('\n').slice(1)) expect(line).toMatch(/^2026-01-\d\d,(north|harbour|airport|valley),-?\d+\.\d,\d+\.\d$/);
  });
});
