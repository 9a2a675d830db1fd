import { redisOptions } from './redis';

describe('redisOptions: a REDIS_URL as connection options', () => {
  it('reads host, port, credentials, database and TLS from the URL, keeping the fail-fast defaults', () => {
    expect(redisOptions('rediss://user:p%40ss@cache.example:6380/2')).toMatchObject({
      host: 'cache.example',
      port: 6380,
      username: 'user',
      password: 'p@ss',
      db: 2,
      tls: {},
      maxRetriesPerRequest: 1,
    });
    const plain = redisOptions('redis://127.0.0.1');
    expect(plain).toMatchObject({ host: '127.0.0.1', port: 6379 });
    expect(plain).not.toHaveProperty('tls');
    expect(plain).not.toHaveProperty('db');
    expect(redisOptions('redis://[::1]:6379').host).toBe('::1');
  });

  it('lets the caller override a default', () => {
    expect(redisOptions('redis://localhost:6379', { maxRetriesPerRequest: null }).maxRetriesPerRequest).toBeNull();
  });
});
