// The bulk answers (E4, E6) read their records' addresses and activity ahead, in batches
// (IdentityStore.readAhead): the answers must be byte for byte those of one lookup per record, across
// several batches, repeated and unknown keys, every way of naming an address, and the postal route.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerBulk, type BulkTask } from '../../../service/identity/bulkWork.js';
import { intelligencePolicyFor, type KeyAccess } from '../../../service/identity/policy.js';
import { requestedFields } from '../../../service/identity/requestPolicy.js';
import { IdentityStore } from '../../../service/identity/store.js';
import { openServiceDb, type ServiceDb } from '../../../service/store/db.js';
import { tempDir } from '../../helpers/service.js';
import { importFixture, md5, nowS, sha1 } from './fixture.js';

type E6Task = Extract<BulkTask, { kind: 'intelligence' }>;

const KNOWN = ['jane.doe@example.com', 'jd@example.org', 'john.doe@example.com', 'jim.doe@example.net'];

/** `count` records naming the fixture's people every way, with unknown, malformed and repeated ones. */
function records(count: number): unknown[] {
  const out: unknown[] = [];
  for (let i = 0; out.length < count; i++) {
    const known = KNOWN[i % KNOWN.length];
    out.push(
      { email: ` ${known.toUpperCase()} ` },
      { md5_email: md5(known) },
      { sha1_email: sha1(known).toUpperCase() },
      { email: `unknown.${i}@example.com` },
      { md5_email: md5(`unknown.${i}@example.com`) },
      { sha1_email: 'not a digest' },
      { email: 'ann.roe@example.com', fields: 'age,eam' },
      { first: 'Jane', last: 'Doe', street: '12 Main Street', zip: '62704' },
      { first: 'Bob', last: 'Poe', street: '1 Nowhere Road', city: 'Springfield', state: 'IL' },
      { email: '' },
      'not a record',
    );
  }
  return out.slice(0, count);
}

describe('bulk answers read ahead', () => {
  let dir: ReturnType<typeof tempDir>;
  let db: ServiceDb;
  let readingAhead: IdentityStore;
  let oneByOne: IdentityStore;

  beforeAll(async () => {
    dir = tempDir();
    db = openServiceDb(dir.path);
    await importFixture(db, dir.path);
    readingAhead = new IdentityStore(db);
    oneByOne = new IdentityStore(db);
    // The store as it answered before reading ahead: one statement per lookup.
    oneByOne.readAhead = () => {};
  });

  afterAll(() => {
    db.close();
    dir.remove();
  });

  const key: KeyAccess = {
    services: new Set(['intelligence', 'eam', 'postal_append', 'email_append', 'alternate_email']),
    fields: null,
    alternateMax: 5,
    bulkLimit: 5000,
  };
  const policy = intelligencePolicyFor(key);
  if (!policy.ok) throw new Error('the test key has no intelligence policy');

  const tasks: [string, (body: string) => BulkTask][] = [
    [
      'E6',
      (body) => ({
        kind: 'intelligence',
        body,
        limit: 5000,
        policy: policy.policy,
        key,
        isActivityMetrics: false,
        nowS: nowS(),
      }),
    ],
    [
      'E4',
      (body) => ({
        kind: 'identity',
        body,
        limit: 5000,
        policy: { alternateEmail: true, emailAppend: true, postalAppend: true, alternateMax: 5 },
      }),
    ],
  ];

  for (const [name, task] of tasks) {
    it(`answers ${name} as one lookup per record does, over several batches`, () => {
      const body = JSON.stringify(records(1_234));
      const ahead = answerBulk(readingAhead, task(body));
      const single = answerBulk(oneByOne, task(body));
      expect(ahead.ok && single.ok).toBe(true);
      if (!ahead.ok || !single.ok) return;
      const text = Buffer.from(ahead.json).toString('utf8');
      expect(text).toBe(Buffer.from(single.json).toString('utf8'));
      // Not an empty answer that merely agrees: the known people were found.
      const answers = JSON.parse(text) as Record<string, unknown>[];
      expect(answers).toHaveLength(1_234);
      expect(answers.filter((answer) => 'postal_address' in answer).length).toBeGreaterThan(100);
    });
  }

  it('gives an E6 answer its members in the order of the request’s fields', () => {
    const ordered = intelligencePolicyFor(key, requestedFields({ fields: 'interests,zip,eam,age' }));
    if (!ordered.ok) throw new Error('the test key lacks a field');
    const outcome = answerBulk(readingAhead, {
      ...(tasks[0][1](JSON.stringify([{ email: 'jane.doe@example.com' }])) as E6Task),
      policy: ordered.policy,
    });
    if (!outcome.ok) throw new Error(outcome.message);
    const [answer] = JSON.parse(Buffer.from(outcome.json).toString('utf8')) as Record<string, unknown>[];
    expect(Object.keys(answer)).toEqual(['interests', 'zip', 'age', 'eam']);
  });

  it('forgets what it read once the request is answered', () => {
    answerBulk(readingAhead, tasks[0][1](JSON.stringify(records(20))));
    const probe = new IdentityStore(db);
    expect(readingAhead.findByEmail('jane.doe@example.com')).toEqual(
      probe.findByEmail('jane.doe@example.com'),
    );
    // A lookup after the request reads the database again: a new address is found.
    expect(readingAhead.findByEmail('unknown.0@example.com')).toBeUndefined();
    db.prepare("INSERT INTO ref_emails (email, md5, sha1) VALUES ('unknown.0@example.com', ?, ?)").run(
      Buffer.from(md5('unknown.0@example.com'), 'hex'),
      Buffer.from(sha1('unknown.0@example.com'), 'hex'),
    );
    expect(readingAhead.findByEmail('unknown.0@example.com')?.email.email).toBe('unknown.0@example.com');
  });
});
