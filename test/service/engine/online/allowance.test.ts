// A host's recipients a conversation, as learnt from "452 too many recipients" (issue 38): kept exactly, for an
// hour, not climbing back as load limits do; the connections a minute follow it; a team's other nodes start
// from it (what `learnt()` gives is what service/pg/knowledge.ts stores in host_limits).
import { describe, expect, it } from 'vitest';
import { HostAllowance, type AllowanceOptions } from '../../../../service/engine/online/allowance.js';

const OPTIONS: AllowanceOptions = {
  maxConcurrency: 2,
  maxConnectsPerMinute: 30,
  maxRcptPerSession: 100,
  maxErrorsPerSession: 10,
  windowMs: 60_000,
  recoverMs: 90_000,
  closeGraceMs: 1000,
};

describe("a host's recipients a conversation", () => {
  it('is kept at the number the server took, for an hour, and lowered only by a lower one', () => {
    const allowance = new HostAllowance('mx.example.com', OPTIONS);
    allowance.limitRecipients(3);
    expect(allowance.limit('recipients')).toBe(3);
    // Long after a load limit would have climbed back (recoverMs: 90 s).
    expect(allowance.limit('recipients', Date.now() + 30 * 60_000)).toBe(3);
    // A concurrent conversation that had asked more before it was learnt names a higher number: kept at 3.
    allowance.limitRecipients(5);
    expect(allowance.limit('recipients')).toBe(3);
    allowance.limitRecipients(1);
    expect(allowance.limit('recipients')).toBe(1);
    // After the hour, the configured 100 again.
    expect(allowance.limit('recipients', Date.now() + 61 * 60_000)).toBe(100);
  });

  it('raises the connections a minute as much as the conversations are shorter, at most 4 times', () => {
    const allowance = new HostAllowance('mx.example.com', OPTIONS);
    expect(allowance.limit('rate')).toBe(30);
    allowance.limitRecipients(50);
    expect(allowance.limit('rate')).toBe(60);
    allowance.limitRecipients(3);
    expect(allowance.limit('rate')).toBe(120);
    expect(allowance.describe()).toBe('2 connections at a time and about 120 a minute');
    // A rate refusal still lowers it, from there.
    allowance.refuse('rate', 100, '421 4.7.0 Error: too many connections');
    expect(allowance.limit('rate')).toBe(50);
  });

  it('is shared: another node starts at it, and at the connections a minute it allows', () => {
    const first = new HostAllowance('mx.example.com', OPTIONS);
    const told: unknown[] = [];
    first.onLearnt = (learnt) => told.push(learnt);
    first.limitRecipients(3);
    const learnt = first.learnt();
    expect(told).toEqual([learnt]);
    expect(learnt.recipients?.value).toBe(3);
    expect(learnt.recipients!.until).toBeGreaterThan(Date.now() + 59 * 60_000);
    // Stored as JSON (host_limits.limits), read by a node that has not talked to the host yet.
    const other = new HostAllowance('mx.example.com', OPTIONS);
    other.learn(JSON.parse(JSON.stringify(learnt)) as typeof learnt);
    expect(other.limit('recipients')).toBe(3);
    expect(other.limit('rate')).toBe(120);
  });
});
