import { CURRENCY_CODES, isCurrency, minorUnits } from './currencies';

describe('ISO 4217 currencies', () => {
  it('knows the minor units of the usual and the unusual currencies', () => {
    const expected: Record<string, number> = {
      USD: 2, EUR: 2, GBP: 2, CHF: 2, CAD: 2, AUD: 2, CNY: 2, INR: 2, BRL: 2, MXN: 2, ZAR: 2, SEK: 2, HUF: 2, IDR: 2,
      JPY: 0, KRW: 0, VND: 0, ISK: 0, CLP: 0, PYG: 0, UGX: 0, XAF: 0, XOF: 0, XPF: 0, BIF: 0, DJF: 0, GNF: 0, KMF: 0, RWF: 0, VUV: 0,
      KWD: 3, BHD: 3, OMR: 3, JOD: 3, IQD: 3, LYD: 3, TND: 3,
      CLF: 4, UYW: 4,
      SLE: 2, ZWG: 2, VES: 2, VED: 2, XCG: 2, MRU: 2, STN: 2,
    };
    for (const [code, units] of Object.entries(expected)) expect([code, minorUnits(code)]).toEqual([code, units]);
  });

  it('lists only three-letter upper-case codes with 0, 2, 3 or 4 minor units', () => {
    expect(CURRENCY_CODES.length).toBeGreaterThan(150);
    for (const code of CURRENCY_CODES) {
      expect(code).toMatch(/^[A-Z]{3}$/);
      expect([0, 2, 3, 4]).toContain(minorUnits(code));
    }
    expect([...CURRENCY_CODES].sort()).toEqual(CURRENCY_CODES);
  });

  it('leaves out funds, precious metals, special codes and withdrawn currencies', () => {
    for (const code of ['XAU', 'XAG', 'XPT', 'XPD', 'XDR', 'XTS', 'XXX', 'XSU', 'XUA', 'XBA', 'BOV', 'CHE', 'CHW', 'COU', 'MXV', 'USN', 'UYI', 'HRK', 'SLL', 'ZWL', 'ANG', 'CUC', 'BGN']) {
      expect([code, isCurrency(code)]).toEqual([code, false]);
    }
  });

  it('refuses anything that is not exactly a known code', () => {
    for (const bad of ['usd', 'Usd', 'US', 'USDD', ' USD', '', 'ABC', 'toString', '__proto__', 'constructor', 840, null, undefined, {}]) {
      expect(isCurrency(bad)).toBe(false);
    }
    expect(() => minorUnits('ABC')).toThrow(RangeError);
    expect(() => minorUnits('hasOwnProperty')).toThrow(RangeError);
  });
});
