import { sandboxBehaviour } from './sandbox-rules';

describe('sandbox rules', () => {
  it('picks the behaviour from the amount\'s last two digits', () => {
    expect(sandboxBehaviour(1000, 'm_1')).toBe('succeed');
    expect(sandboxBehaviour(1002, 'm_1')).toBe('decline');
    expect(sandboxBehaviour(2, 'm_1')).toBe('decline');
    expect(sandboxBehaviour(99_905, 'm_1')).toBe('fail_once');
    expect(sandboxBehaviour(1008, 'm_1')).toBe('timeout');
    for (const cents of [1001, 1003, 1012, 1020, 1050, 1080, 1099]) expect(sandboxBehaviour(cents, 'm_1')).toBe('succeed');
  });

  it('lets the test merchants name the behaviour whatever the amount', () => {
    expect(sandboxBehaviour(1000, 'm_decline')).toBe('decline');
    expect(sandboxBehaviour(1000, 'm_fail')).toBe('fail_once');
    expect(sandboxBehaviour(1002, 'm_timeout')).toBe('timeout');
    expect(sandboxBehaviour(1000, 'M_DECLINE')).toBe('succeed');
  });
});
