import { describe, expect, it } from 'vitest';
import { BackoffGate, DEFAULT_RATE_LIMIT_BACKOFF_MS } from '../../src/limits/backoff-gate.js';

describe('BackoffGate', () => {
  it('closes for Retry-After after a 429, and for 60 s when the header is missing', () => {
    let now = 1_000;
    const gate = new BackoffGate(() => now);
    expect(gate.isOpen()).toBe(true);
    gate.observe(429, null);
    expect(gate.remainingMs()).toBe(DEFAULT_RATE_LIMIT_BACKOFF_MS);
    now += 60_000;
    expect(gate.isOpen()).toBe(true);
    gate.observe(429, 5_000);
    expect(gate.remainingMs()).toBe(5_000);
  });

  it('closes after a 503 only when it carries Retry-After, and never shortens a closure', () => {
    const gate = new BackoffGate(() => 0);
    gate.observe(503, null);
    expect(gate.isOpen()).toBe(true);
    gate.observe(503, 30_000);
    expect(gate.remainingMs()).toBe(30_000);
    gate.observe(429, 1_000);
    expect(gate.remainingMs()).toBe(30_000);
    gate.observe(200, 1);
    expect(gate.remainingMs()).toBe(30_000);
  });

  it('waitOpen resolves once the closure has passed', async () => {
    const gate = new BackoffGate();
    gate.closeFor(50);
    const start = performance.now();
    await gate.waitOpen();
    expect(performance.now() - start).toBeGreaterThanOrEqual(45);
    expect(gate.isOpen()).toBe(true);
  });
});
