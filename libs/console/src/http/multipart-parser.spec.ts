import { parseMultipart } from './multipart-parser';

const body = (boundary: string, parts: string[]) => Buffer.from(`${parts.map((p) => `--${boundary}\r\n${p}\r\n`).join('')}--${boundary}--\r\n`, 'latin1');
const headers = (boundary: string) => ({ 'content-type': `multipart/form-data; boundary=${boundary}` });

describe('the console\u2019s multipart parser', () => {
  it('answers fields (first value wins) and a file as its UTF-8 text with its name', async () => {
    const b = 'XyZ';
    const out = await parseMultipart(
      headers(b),
      body(b, [
        'Content-Disposition: form-data; name="csrf"\r\n\r\nt1',
        'Content-Disposition: form-data; name="csrf"\r\n\r\nt2',
        `Content-Disposition: form-data; name="file"; filename="r\u00c3\u00a9sum\u00c3\u00a9.csv"\r\nContent-Type: text/csv\r\n\r\na,b\r\n\u00c3\u00a9,2`,
      ]),
      1024,
    );
    expect({ ...out }).toEqual({ csrf: 't1', file: 'a,b\r\n\u00e9,2', 'file.filename': 'r\u00e9sum\u00e9.csv' });
  });

  it('says when a file is not UTF-8 text, and skips a file input left empty', async () => {
    const b = 'b0';
    const bad = await parseMultipart(headers(b), Buffer.concat([Buffer.from(`--${b}\r\nContent-Disposition: form-data; name="file"; filename="x.bin"\r\n\r\n`), Buffer.from([0xff, 0xfe]), Buffer.from(`\r\n--${b}--\r\n`)]), 1024);
    expect({ ...bad }).toEqual({ 'file.filename': 'x.bin', 'file.error': 'not_utf8' });
    const empty = await parseMultipart(headers(b), body(b, ['Content-Disposition: form-data; name="file"; filename=""\r\nContent-Type: application/octet-stream\r\n\r\n', 'Content-Disposition: form-data; name="content"\r\n\r\nhi']), 1024);
    expect({ ...empty }).toEqual({ content: 'hi' });
  });

  it('refuses a body with no boundary', async () => {
    await expect(parseMultipart({ 'content-type': 'multipart/form-data' }, Buffer.from('x'), 1024)).rejects.toThrow();
  });
});
