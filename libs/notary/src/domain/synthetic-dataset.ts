/**
 * A small synthetic dataset for the sandbox: daily weather readings of a few stations, as CSV,
 * the same for the same seed. The generator is a 32-bit mulberry32, written here because the
 * dataset must be reproducible from the seed the response shows (node:crypto has no seeded
 * generator) and nothing about it needs to be secure.
 */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STATIONS = ['north', 'harbour', 'airport', 'valley'];

export interface SyntheticDataset {
  filename: string;
  content: string;
  rows: number;
  columns: string[];
  seed: number;
}

export function syntheticDataset(seed: number, rows = 24, start = new Date('2026-01-01T00:00:00Z')): SyntheticDataset {
  const random = mulberry32(seed);
  const columns = ['date', 'station', 'temperature_c', 'rainfall_mm'];
  const lines = [columns.join(',')];
  for (let i = 0; i < rows; i++) {
    const day = new Date(start.getTime() + Math.floor(i / STATIONS.length) * 86_400_000).toISOString().slice(0, 10);
    const station = STATIONS[i % STATIONS.length];
    const temperature = (random() * 30 - 5).toFixed(1);
    const rain = random() < 0.6 ? '0.0' : (random() * 25).toFixed(1);
    lines.push([day, station, temperature, rain].join(','));
  }
  return { filename: `sandbox-weather-${seed.toString(16).padStart(8, '0')}.csv`, content: `${lines.join('\n')}\n`, rows, columns, seed };
}
