// `mailsieve data demo --people N`: synthetic reference data for trying the app, clearly labelled as such —
// every address is at demo.example.com/.org/.net (example domains are reserved: no mailbox exists there),
// every person id starts `demo-`, every activity source starts `mailsieve-demo/`, and the dataset is named
// `mailsieve-demo`. Deterministic for a seed. The rows are the CSV rows a file would hold, checked by the
// same code as an import (or written as CSV files, for benchmarks and tests).
import type { Database } from 'better-sqlite3';
import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import {
  AGE_RANGES,
  EDUCATIONS,
  FINANCIAL_GROUPS,
  FINANCIAL_SEGMENTS,
  HOME_MARKET_VALUES,
  HOME_OWNER_STATUSES,
  HOUSEHOLD_INCOMES,
  INTEREST_NAMES,
  LENGTHS_OF_RESIDENCE,
  LIFE_STAGE_GROUPS,
  LIFE_STAGE_SEGMENTS,
  MARITAL_STATUSES,
  NET_WORTHS,
  OCCUPATIONS,
} from '../../shared/api/intelligence.js';
import { ActivityWriter, activityLayout, readActivityRow, type ActivityRecord } from './import.activity.js';
import { PeopleWriter, peopleLayout, readPersonRow, type PersonRecord } from './import.people.js';
import { finishDataset, startDataset, withBulkLoad } from './import.js';

export const DEMO_DATASET = 'mailsieve-demo';
export const DEMO_SOURCE_PREFIX = 'mailsieve-demo/';
export const DEMO_DOMAINS = ['demo.example.com', 'demo.example.org', 'demo.example.net'] as const;

export const DEMO_PEOPLE_HEADER = [
  'person_id',
  'email',
  'email 2',
  'email 3',
  'first name',
  'last name',
  'street',
  'city',
  'state',
  'zip',
  'household_id',
  'age',
  'gender',
  'household_income',
  'net_worth',
  'home_market_value',
  'home_owner_status',
  'length_of_residence',
  'marital_status',
  'presence_of_children',
  'education',
  'occupation',
  'rfm_offline_avg_days',
  'rfm_online_avg_days',
  'rfm_avg_dollars',
  'rfm_last_order',
  'life_stage_segment',
  'life_stage_group',
  'financial_segment',
  'financial_group',
  'interests',
] as const;
export const DEMO_ACTIVITY_HEADER = ['email', 'source', 'event', 'occurred_at'] as const;

const FEMALE = [
  'Mary',
  'Patricia',
  'Jennifer',
  'Linda',
  'Elizabeth',
  'Barbara',
  'Susan',
  'Jessica',
  'Sarah',
  'Karen',
  'Lisa',
  'Nancy',
  'Betty',
  'Sandra',
  'Margaret',
  'Ashley',
  'Kimberly',
  'Emily',
  'Donna',
  'Michelle',
  'Carol',
  'Amanda',
  'Melissa',
  'Deborah',
  'Stephanie',
  'Rebecca',
  'Laura',
  'Helen',
  'Sharon',
  'Cynthia',
];
const MALE = [
  'James',
  'Robert',
  'John',
  'Michael',
  'David',
  'William',
  'Richard',
  'Joseph',
  'Thomas',
  'Christopher',
  'Charles',
  'Daniel',
  'Matthew',
  'Anthony',
  'Mark',
  'Donald',
  'Steven',
  'Andrew',
  'Paul',
  'Joshua',
  'Kenneth',
  'Kevin',
  'Brian',
  'George',
  'Timothy',
  'Ronald',
  'Jason',
  'Edward',
  'Jeffrey',
  'Ryan',
];
const LAST = [
  'Smith',
  'Johnson',
  'Williams',
  'Brown',
  'Jones',
  'Garcia',
  'Miller',
  'Davis',
  'Rodriguez',
  'Martinez',
  'Hernandez',
  'Lopez',
  'Gonzalez',
  'Wilson',
  'Anderson',
  'Thomas',
  'Taylor',
  'Moore',
  'Jackson',
  'Martin',
  'Lee',
  'Perez',
  'Thompson',
  'White',
  'Harris',
  'Sanchez',
  'Clark',
  'Ramirez',
  'Lewis',
  'Robinson',
  'Walker',
  'Young',
  'Allen',
  'King',
  'Wright',
  'Scott',
  'Torres',
  'Nguyen',
  'Hill',
  'Flores',
  'Green',
  'Adams',
  'Nelson',
  'Baker',
  'Hall',
  'Rivera',
  'Campbell',
  'Mitchell',
  'Carter',
  'Roberts',
];
const STREETS = [
  'Maple',
  'Oak',
  'Pine',
  'Cedar',
  'Elm',
  'Washington',
  'Lake',
  'Hill',
  'Park',
  'Main',
  'Sunset',
  'Highland',
  'Walnut',
  'Chestnut',
  'Willow',
  'Spring',
  'River',
  'Meadow',
  'Forest',
  'Church',
  'Lincoln',
  'Jefferson',
  'Madison',
  'Franklin',
  'Adams',
  'Jackson',
  'Ridge',
  'Valley',
  'Mill',
  'Prospect',
];
const SUFFIXES = ['St', 'Ave', 'Rd', 'Dr', 'Ln', 'Ct', 'Pl', 'Blvd', 'Way', 'Ter'];
/** City, state and a ZIP prefix of that area. */
const PLACES: readonly (readonly [string, string, string])[] = [
  ['Springfield', 'IL', '627'],
  ['Portland', 'OR', '972'],
  ['Austin', 'TX', '787'],
  ['Denver', 'CO', '802'],
  ['Madison', 'WI', '537'],
  ['Columbus', 'OH', '432'],
  ['Raleigh', 'NC', '276'],
  ['Boise', 'ID', '837'],
  ['Albany', 'NY', '122'],
  ['Richmond', 'VA', '232'],
  ['Tucson', 'AZ', '857'],
  ['Omaha', 'NE', '681'],
  ['Salem', 'MA', '019'],
  ['Burlington', 'VT', '054'],
  ['Savannah', 'GA', '314'],
  ['Tulsa', 'OK', '741'],
  ['Fresno', 'CA', '937'],
  ['Spokane', 'WA', '992'],
  ['Reno', 'NV', '895'],
  ['Des Moines', 'IA', '503'],
  ['Lexington', 'KY', '405'],
  ['Knoxville', 'TN', '379'],
  ['Trenton', 'NJ', '086'],
  ['Augusta', 'ME', '043'],
  ['Saint Paul', 'MN', '551'],
  ['Baton Rouge', 'LA', '708'],
  ['Anchorage', 'AK', '995'],
  ['Honolulu', 'HI', '968'],
];
const SOURCES = ['newsletter', 'shop', 'webinars', 'loyalty', 'events', 'partner-a', 'partner-b', 'survey'];
const EVENT_KINDS = ['seen', 'open', 'open', 'open', 'click'] as const;

/** mulberry32: a small, fast, seedable PRNG (the demo must be the same for the same seed). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface DemoOptions {
  readonly people: number;
  readonly seed?: number;
  /** Unix seconds the activity ends at (default now). */
  readonly nowS?: number;
}

export interface DemoPerson {
  readonly person: string[];
  readonly activity: string[][];
}

const DAY = 86_400;

/** The demo's people, household by household, each with its activity rows. */
export function* demoPeople(options: DemoOptions): Generator<DemoPerson> {
  const rand = random(options.seed ?? 1);
  const nowS = options.nowS ?? Math.floor(Date.now() / 1000);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(rand() * values.length)];
  const maybe = (value: string, p = 0.85) => (rand() < p ? value : '');
  const pad = (n: number, width: number) => String(n).padStart(width, '0');
  let made = 0;
  let household = 0;
  while (made < options.people) {
    household++;
    const size = Math.min(options.people - made, pick([1, 1, 1, 1, 2, 2, 2, 3, 3, 4]));
    const [city, state, prefix] = pick(PLACES);
    const street = `${1 + Math.floor(rand() * 9999)} ${pick(STREETS)} ${pick(SUFFIXES)}`;
    const zip5 = `${prefix}${pad(Math.floor(rand() * 100), 2)}`;
    const zip = rand() < 0.9 ? `${zip5}-${pad(Math.floor(rand() * 10000), 4)}` : zip5;
    const familyName = pick(LAST);
    const shared = {
      income: maybe(pick(HOUSEHOLD_INCOMES)),
      worth: maybe(pick(NET_WORTHS)),
      home: maybe(pick(HOME_MARKET_VALUES)),
      owner: maybe(pick(HOME_OWNER_STATUSES)),
      residence: maybe(pick(LENGTHS_OF_RESIDENCE)),
      children: maybe(size > 2 ? 'Yes' : pick(['Yes', 'No'])),
      lastOrder: maybe(new Date((nowS - Math.floor(rand() * 1000) * DAY) * 1000).toISOString().slice(0, 10)),
    };
    for (let member = 0; member < size; member++) {
      made++;
      const isFemale = rand() < 0.5;
      const first = pick(isFemale ? FEMALE : MALE);
      const last = member > 0 && rand() < 0.15 ? pick(LAST) : familyName;
      const emailCount = pick([1, 1, 1, 1, 1, 1, 2, 2, 2, 3]);
      const emails: string[] = [];
      for (let k = 0; k < emailCount; k++)
        emails.push(
          `${first}.${last}.${made}${k > 0 ? `.${k + 1}` : ''}@${pick(DEMO_DOMAINS)}`.toLowerCase(),
        );
      const interests = INTEREST_NAMES.filter(() => rand() < 0.15).join(';');
      const person = [
        `demo-${pad(made, 7)}`,
        emails[0] ?? '',
        emails[1] ?? '',
        emails[2] ?? '',
        first,
        last,
        street,
        city,
        state,
        zip,
        `demo-household-${household}`,
        maybe(pick(AGE_RANGES)),
        maybe(isFemale ? 'Female' : 'Male', 0.95),
        shared.income,
        shared.worth,
        shared.home,
        shared.owner,
        shared.residence,
        maybe(size > 1 ? 'Married' : pick(MARITAL_STATUSES)),
        shared.children,
        maybe(pick(EDUCATIONS)),
        maybe(pick(OCCUPATIONS)),
        maybe(String(10 + Math.floor(rand() * 300)), 0.6),
        maybe(String(5 + Math.floor(rand() * 200)), 0.6),
        maybe(String(10 + Math.floor(rand() * 400)), 0.6),
        shared.lastOrder,
        maybe(pick(LIFE_STAGE_SEGMENTS)),
        maybe(pick(LIFE_STAGE_GROUPS)),
        maybe(pick(FINANCIAL_SEGMENTS)),
        maybe(pick(FINANCIAL_GROUPS)),
        interests,
      ];
      const activity: string[][] = [];
      for (const email of emails) {
        if (rand() < 0.3) continue;
        // First seen up to four years ago, events since then, denser for the more active.
        const firstSeen = nowS - Math.floor(rand() * 4 * 365) * DAY - Math.floor(rand() * DAY);
        const events = 1 + Math.floor(-Math.log(1 - rand()) * 3);
        for (let e = 0; e < events; e++) {
          const at = e === 0 ? firstSeen : firstSeen + Math.floor(rand() * (nowS - firstSeen));
          activity.push([
            email,
            `${DEMO_SOURCE_PREFIX}${pick(SOURCES)}`,
            e === 0 ? 'seen' : pick(EVENT_KINDS),
            new Date(at * 1000).toISOString().slice(0, 19) + 'Z',
          ]);
        }
      }
      yield { person, activity };
    }
  }
}

export interface DemoSummary {
  readonly people: number;
  readonly emails: number;
  readonly events: number;
  readonly seconds: number;
}

/** Loads the demo into the reference store, as dataset `mailsieve-demo`. Running it again updates it. */
export async function loadDemo(db: Database, options: DemoOptions): Promise<DemoSummary> {
  const started = performance.now();
  const nowS = options.nowS ?? Math.floor(Date.now() / 1000);
  const datasetId = startDataset(db, 'demo', DEMO_DATASET);
  const people = new PeopleWriter(db, datasetId);
  const activity = new ActivityWriter(db);
  const peopleLayoutOf = peopleLayout(DEMO_PEOPLE_HEADER);
  const activityLayoutOf = activityLayout(DEMO_ACTIVITY_HEADER);
  let personBatch: PersonRecord[] = [];
  let eventBatch: ActivityRecord[] = [];
  let emails = 0;
  const flush = () => {
    people.write(personBatch);
    activity.write(eventBatch);
    personBatch = [];
    eventBatch = [];
  };
  await withBulkLoad(db, () => {
    for (const { person, activity: events } of demoPeople({ ...options, nowS })) {
      const checked = readPersonRow(peopleLayoutOf, person);
      // The demo is made of valid values; a failure here is a bug in this file.
      if (!checked.ok) throw new Error(`Demo person is invalid: ${checked.message}`);
      personBatch.push(checked.record);
      emails += checked.record.emails.length;
      for (const event of events) {
        const record = readActivityRow(activityLayoutOf, event, nowS);
        if (!record.ok) throw new Error(`Demo event is invalid: ${record.message}`);
        eventBatch.push(record.record);
      }
      if (personBatch.length >= 10_000) flush();
    }
    flush();
    return Promise.resolve();
  });
  finishDataset(db, datasetId, options.people, options.people, 0);
  return {
    people: options.people,
    emails,
    events: activity.added,
    seconds: (performance.now() - started) / 1000,
  };
}

/** One CSV line (RFC 4180 quoting where a field needs it). */
function line(row: readonly string[]): string {
  return `${row.map((field) => (/[",\r\n]/.test(field) ? `"${field.replace(/"/g, '""')}"` : field)).join(',')}\n`;
}

async function write(stream: WriteStream, text: string): Promise<void> {
  if (!stream.write(text)) await once(stream, 'drain');
}

/** Writes the demo as two CSV files (`people.csv`, `activity.csv`) in `dir`, for import. */
export async function writeDemoCsv(
  dir: string,
  options: DemoOptions,
): Promise<{ people: string; activity: string }> {
  const peopleFile = join(dir, 'people.csv');
  const activityFile = join(dir, 'activity.csv');
  const people = createWriteStream(peopleFile);
  const activity = createWriteStream(activityFile);
  let peopleChunk = line(DEMO_PEOPLE_HEADER);
  let activityChunk = line(DEMO_ACTIVITY_HEADER);
  for (const { person, activity: events } of demoPeople(options)) {
    peopleChunk += line(person);
    for (const event of events) activityChunk += line(event);
    if (peopleChunk.length > 1 << 20) {
      await write(people, peopleChunk);
      peopleChunk = '';
    }
    if (activityChunk.length > 1 << 20) {
      await write(activity, activityChunk);
      activityChunk = '';
    }
  }
  await write(people, peopleChunk);
  await write(activity, activityChunk);
  people.end();
  activity.end();
  await Promise.all([once(people, 'finish'), once(activity, 'finish')]);
  return { people: peopleFile, activity: activityFile };
}
