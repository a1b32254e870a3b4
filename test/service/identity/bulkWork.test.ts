// The bulk answers (E4, E6) read their records' addresses and activity ahead, in batches
// (IdentityStore.readAhead): the answers must be byte for byte those of one lookup per record, across
// several batches, repeated and unknown keys, every way of naming an address, and the postal route.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerBulk, type BulkTask } from '../../../service/identity/bulkWork.js';
import { loadDemo } from '../../../service/identity/demo.js';
import { importPeopleFile } from '../../../service/identity/import.js';
import {
  answersWaiting,
  packAddressActivity,
  prepareAnswers,
  renderPeople,
} from '../../../service/identity/prepared.js';
import { intelligencePolicyFor, type KeyAccess } from '../../../service/identity/policy.js';
import { requestedFields } from '../../../service/identity/requestPolicy.js';
import { INTELLIGENCE_FIELDS } from '../../../shared/api/intelligence.js';
import { IdentityStore } from '../../../service/identity/store.js';
import { openServiceDb, type ServiceDb } from '../../../service/store/db.js';
import { tempDir } from '../../helpers/service.js';
import {
  importFixture,
  INTELLIGENCE_KEY,
  intelligenceTask,
  md5,
  nowS,
  PEOPLE_HEADER,
  PEOPLE_ROWS,
  sha1,
  writeCsv,
} from './fixture.js';

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

// E6 answers for the whole field set are put together from each person's answer rendered at import
// (answers.ts renderPerson, `ref_people.answer_json`): they must be the text the answer objects give.
describe('rendered answers', () => {
  let dir: ReturnType<typeof tempDir>;
  let db: ServiceDb;
  let rendered: IdentityStore;
  let fromColumns: IdentityStore;

  const key = INTELLIGENCE_KEY;
  const e6 = (body: unknown[], policyKey: KeyAccess = key): E6Task => intelligenceTask(body, policyKey);
  const text = (store: IdentityStore, task: E6Task) => {
    const outcome = answerBulk(store, task);
    if (!outcome.ok) throw new Error(outcome.message);
    return Buffer.from(outcome.json).toString('utf8');
  };

  beforeAll(async () => {
    dir = tempDir();
    db = openServiceDb(dir.path);
    await loadDemo(db, { people: 1_500, seed: 11 });
    // An import leaves the answers to prepare (the service does it in the background).
    expect(answersWaiting(db).people).toBeGreaterThan(1_000);
    prepareAnswers(db);
    rendered = new IdentityStore(db);
    fromColumns = new IdentityStore(db);
    // Reading ahead without rendered answers: every answer is built from the person's columns.
    const readAhead = fromColumns.readAhead.bind(fromColumns);
    fromColumns.readAhead = (keys, at) => readAhead(keys, at);
  });

  afterAll(() => {
    db.close();
    dir.remove();
  });

  const demoAddresses = () =>
    db.prepare<[], string>('SELECT email FROM ref_emails ORDER BY id').pluck().all();

  it('prepares every person and address', () => {
    expect(answersWaiting(db)).toEqual({ people: 0, addresses: 0 });
    expect(db.prepare('SELECT count(*) FROM ref_people WHERE answer_json IS NULL').pluck().get()).toBe(0);
    expect(
      db.prepare('SELECT count(*) FROM ref_emails WHERE length(activity_packed) > 0').pluck().get(),
    ).toBeGreaterThan(1_000);
  });

  it('gives every demo person the answer built from their columns, by email, MD5 and SHA-1', () => {
    const addresses = demoAddresses();
    for (const [name, policyKey] of [
      ['intelligence, eam and postal', key],
      ['intelligence only', { ...key, services: new Set(['intelligence']) }],
      ['no month_last_open', { ...key, fields: new Set(INTELLIGENCE_FIELDS) }],
    ] as const) {
      for (const recordOf of [
        (a: string): Record<string, string> => ({ email: a }),
        (a: string) => ({ md5_email: md5(a) }),
        (a: string) => ({ sha1_email: sha1(a) }),
      ]) {
        for (let start = 0; start < addresses.length; start += 5000) {
          const task = e6(addresses.slice(start, start + 5000).map(recordOf), policyKey as KeyAccess);
          expect(text(rendered, task), name).toBe(text(fromColumns, task));
        }
      }
    }
  });

  it('answers from the rendered text (not the columns) when it can', () => {
    const [address] = demoAddresses();
    const personId = db
      .prepare<[string], number>('SELECT person_id FROM ref_emails WHERE email = ?')
      .pluck()
      .get(address)!;
    const saved = db.prepare('SELECT answer_json FROM ref_people WHERE id = ?').pluck().get(personId);
    db.prepare(`UPDATE ref_people SET answer_json = '"age":"rendered"' WHERE id = ?`).run(personId);
    try {
      const [answer] = JSON.parse(text(rendered, e6([{ email: address }]))) as Record<string, unknown>[];
      expect(answer.age).toBe('rendered');
      // A request for some fields only is answered from the columns.
      const some = intelligencePolicyFor(key, requestedFields({ fields: 'age,eam' }));
      if (!some.ok) throw new Error(some.message);
      const [partial] = JSON.parse(
        text(rendered, { ...e6([{ email: address }]), policy: some.policy }),
      ) as Record<string, unknown>[];
      expect(partial.age).not.toBe('rendered');
      // The activity comes packed with the address: packed as none, the address reads as unknown.
      expect((answer.eam as Record<string, unknown>).date_first_seen).not.toBe('now');
      db.prepare(`UPDATE ref_emails SET activity_packed = X'' WHERE email = ?`).run(address);
      const [unpacked] = JSON.parse(text(rendered, e6([{ email: address }]))) as Record<string, unknown>[];
      expect((unpacked.eam as Record<string, unknown>).date_first_seen).toBe('now');
    } finally {
      db.prepare('UPDATE ref_people SET answer_json = ? WHERE id = ?').run(saved, personId);
      db.prepare('UPDATE ref_emails SET activity_packed = NULL WHERE email = ?').run(address);
      packAddressActivity(db);
    }
  });

  it('answers a person not rendered yet from the columns, and renderPeople renders them', () => {
    const addresses = demoAddresses().slice(0, 300);
    const task = e6(addresses.map((email) => ({ email })));
    const before = text(rendered, task);
    db.exec('UPDATE ref_people SET answer_json = NULL, postal_json = NULL WHERE id % 2 = 0');
    expect(text(rendered, task)).toBe(before);
    expect(renderPeople(db)).toBeGreaterThan(100);
    expect(db.prepare('SELECT count(*) FROM ref_people WHERE answer_json IS NULL').pluck().get()).toBe(0);
    expect(text(rendered, task)).toBe(before);
  });

  it('renders a person again when an import changes them', async () => {
    const importDir = tempDir();
    try {
      await importFixture(db, importDir.path);
      prepareAnswers(db);
      const jane = e6([{ email: 'jane.doe@example.com' }]);
      expect((JSON.parse(text(rendered, jane)) as Record<string, unknown>[])[0].age).toBe('35-44');
      const older = PEOPLE_ROWS[1].map((value) => (value === '35-44' ? '45-54' : value));
      await importPeopleFile(db, writeCsv(importDir.path, 'update.csv', [PEOPLE_HEADER, older]));
      // Not prepared again yet: answered from the columns.
      expect(answersWaiting(db).people).toBe(1);
      expect((JSON.parse(text(rendered, jane)) as Record<string, unknown>[])[0].age).toBe('45-54');
      prepareAnswers(db);
      expect(answersWaiting(db).people).toBe(0);
      expect((JSON.parse(text(rendered, jane)) as Record<string, unknown>[])[0].age).toBe('45-54');
      expect(text(rendered, jane)).toBe(text(fromColumns, jane));
    } finally {
      importDir.remove();
    }
  });
});

describe('E6 answer bytes', () => {
  let dir: ReturnType<typeof tempDir>;
  let db: ServiceDb;

  beforeAll(async () => {
    dir = tempDir();
    db = openServiceDb(dir.path);
    // Names and a street beyond ASCII (two-byte, three-byte and four-byte UTF-8), their answers rendered.
    const rows = PEOPLE_ROWS.map((row, i) =>
      i === 0
        ? row
        : [`Zoë${i}`, `Ångström-${i}`, ...row.slice(2, 4), `${i} Rue de l’Église 🏠`, ...row.slice(5)],
    );
    const people = await importPeopleFile(db, writeCsv(dir.path, 'people.csv', rows));
    expect(people.rejected).toBe(0);
    renderPeople(db);
  });

  afterAll(() => {
    db.close();
    dir.remove();
  });

  it('are the UTF-8 of the answers’ JSON, one answer after another', () => {
    const store = new IdentityStore(db);
    const emails = db.prepare<[], string>('SELECT email FROM ref_emails ORDER BY id').pluck().all();
    const body: unknown[] = [];
    for (let i = 0; i < 3000; i++)
      body.push(
        i % 3 === 0
          ? { email: emails[i % emails.length] }
          : i % 3 === 1
            ? { email: `x${i}@example.com` }
            : 'no',
      );
    const task = intelligenceTask(body);
    const outcome = answerBulk(store, task);
    if (!outcome.ok) throw new Error(outcome.message);
    const answers = JSON.parse(Buffer.from(outcome.json).toString('utf8')) as unknown[];
    expect(answers).toHaveLength(3000);
    expect(JSON.stringify(answers[0])).toContain('Zoë');
    expect(JSON.stringify(answers[0])).toContain('🏠');
    // The same bytes as encoding the whole array's text at once.
    expect(Buffer.from(outcome.json).equals(Buffer.from(JSON.stringify(answers), 'utf8'))).toBe(true);
    // And a longer answer after it, in the same thread: the buffer it is written in grows.
    const longer = answerBulk(store, intelligenceTask([...body, ...body.slice(0, 1999)]));
    if (!longer.ok) throw new Error(longer.message);
    expect((JSON.parse(Buffer.from(longer.json).toString('utf8')) as unknown[]).length).toBe(4999);
  });
});
