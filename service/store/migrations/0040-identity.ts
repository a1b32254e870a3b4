import type { Migration } from '../migrate.js';
import type { ScalarIntelligenceField } from '../../../shared/api/intelligence.js';

/**
 * Bit i of `ref_people.interests` stands for INTEREST_BITS[i]. Fixed here, as stored data depends on it:
 * a new interest gets the next bit, none is ever reordered.
 */
export const INTEREST_BITS = [
  'arts_and_crafts',
  'automotive',
  'baby_product_buyer',
  'beauty',
  'blogging',
  'books',
  'business',
  'charitable_donors',
  'cooking',
  'discount_shopper',
  'health_and_wellness',
  'high_end_brand_buyer',
  'home_and_garden',
  'home_improvement',
  'luxury_goods',
  'magazine_buyer',
  'news_and_current_events',
  'outdoor_and_adventure',
  'pets',
  'sports',
  'technology',
  'travel',
] as const;

/**
 * A TEXT column holding one of the spec's enumerated values, or NULL when unknown. The import checks values
 * against the enumerations of shared/api/intelligence.ts; no CHECK here, as SQLite rebuilds an `IN (…)`
 * list for every row written, which made a million-person import ten times slower.
 */
const enumColumn = (name: string): string => `${name} TEXT`;

const ATTRIBUTE_COLUMNS: Record<ScalarIntelligenceField, string> = {
  age: enumColumn('age'),
  gender: enumColumn('gender'),
  // The intelligence field `zip` is the person's ZIP (zip5 below); no column of its own.
  zip: '',
  household_income: enumColumn('household_income'),
  net_worth: enumColumn('net_worth'),
  home_market_value: enumColumn('home_market_value'),
  home_owner_status: enumColumn('home_owner_status'),
  length_of_residence: enumColumn('length_of_residence'),
  marital_status: enumColumn('marital_status'),
  presence_of_children: enumColumn('presence_of_children'),
  education: enumColumn('education'),
  occupation: enumColumn('occupation'),
  rfm_offline_avg_days: 'rfm_offline_avg_days INTEGER CHECK (rfm_offline_avg_days >= 0)',
  rfm_online_avg_days: 'rfm_online_avg_days INTEGER CHECK (rfm_online_avg_days >= 0)',
  rfm_avg_dollars: 'rfm_avg_dollars INTEGER CHECK (rfm_avg_dollars >= 0)',
  rfm_last_order: `rfm_last_order TEXT CHECK (rfm_last_order GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]')`,
  life_stage_segment: enumColumn('life_stage_segment'),
  life_stage_group: enumColumn('life_stage_group'),
  financial_segment: enumColumn('financial_segment'),
  financial_group: enumColumn('financial_group'),
};

/**
 * Reference data for identity matching, email intelligence and activity metrics (docs/identity.md), and the
 * key settings they answer by: enabled fields, alternate email matches, the bulk limit of activity-metrics
 * keys.
 */
export const identity: Migration = {
  version: 40,
  name: 'identity',
  up(db) {
    const attributes = Object.values(ATTRIBUTE_COLUMNS).filter((column) => column !== '');
    db.exec(`
      -- Each import (or demo run): where reference rows came from.
      CREATE TABLE ref_datasets (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('people', 'activity', 'demo')),
        name TEXT NOT NULL,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        rows_read INTEGER NOT NULL DEFAULT 0,
        rows_imported INTEGER NOT NULL DEFAULT 0,
        rows_rejected INTEGER NOT NULL DEFAULT 0
      ) STRICT;

      CREATE TABLE ref_people (
        id INTEGER PRIMARY KEY,
        -- MD5 of how import rows name the same person: a person id column, else name + address, else the
        -- email (docs/identity.md, "Import").
        person_key BLOB NOT NULL UNIQUE,
        dataset_id INTEGER NOT NULL REFERENCES ref_datasets (id),
        first_name TEXT,
        last_name TEXT,
        street TEXT,
        city TEXT,
        state TEXT CHECK (length(state) = 2),
        zip5 TEXT CHECK (zip5 GLOB '[0-9][0-9][0-9][0-9][0-9]'),
        zip4 TEXT CHECK (zip4 GLOB '[0-9][0-9][0-9][0-9]'),
        -- The compared forms of street and city (service/identity/normalise.ts).
        street_key TEXT,
        city_key TEXT,
        -- People of one household: a household id column, else the normalised postal address.
        household TEXT,
        ${attributes.join(',\n        ')},
        -- The interests seen, one bit each (INTEREST_BITS).
        interests INTEGER NOT NULL DEFAULT 0 CHECK (interests BETWEEN 0 AND ${2 ** INTEREST_BITS.length - 1})
      ) STRICT;

      -- Email addresses: of people, and of activity events (which may name addresses no person has).
      CREATE TABLE ref_emails (
        id INTEGER PRIMARY KEY,
        -- Lower-cased, white space removed: the spec's preparation for md5_email and sha1_email.
        email TEXT NOT NULL UNIQUE,
        md5 BLOB NOT NULL CHECK (length(md5) = 16),
        sha1 BLOB NOT NULL CHECK (length(sha1) = 20),
        person_id INTEGER REFERENCES ref_people (id) ON DELETE SET NULL
      ) STRICT;

      CREATE TABLE ref_sources (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE
      ) STRICT;

      -- Activity events: clustered by address and time, the order activity metrics read them in. The same
      -- event imported twice is stored once.
      CREATE TABLE ref_activity (
        email_id INTEGER NOT NULL REFERENCES ref_emails (id) ON DELETE CASCADE,
        occurred_at INTEGER NOT NULL, -- Unix seconds, UTC
        source_id INTEGER NOT NULL REFERENCES ref_sources (id),
        kind TEXT NOT NULL CHECK (kind = 'open' OR kind = 'click' OR kind = 'seen'),
        PRIMARY KEY (email_id, occurred_at, source_id, kind)
      ) STRICT, WITHOUT ROWID;

      ALTER TABLE keys ADD COLUMN fields TEXT; -- JSON array of enabled fields; NULL: every field
      ALTER TABLE keys ADD COLUMN alternate_max INTEGER NOT NULL DEFAULT 1
        CHECK (alternate_max BETWEEN 1 AND 5);
      ALTER TABLE keys ADD COLUMN bulk_limit INTEGER NOT NULL DEFAULT 5000
        CHECK (bulk_limit BETWEEN 1 AND 10000);
    `);
    // The lookup indexes; an import into an empty store drops and rebuilds them (service/identity/store.ts).
    createReferenceIndexes(db);
  },
};

/** The secondary indexes of the reference tables, created when missing. */
export function createReferenceIndexes(db: { exec(sql: string): unknown }): void {
  db.exec(`
    CREATE INDEX IF NOT EXISTS ref_emails_md5 ON ref_emails (md5);
    CREATE INDEX IF NOT EXISTS ref_emails_sha1 ON ref_emails (sha1);
    CREATE INDEX IF NOT EXISTS ref_emails_person ON ref_emails (person_id, id) WHERE person_id IS NOT NULL;
    CREATE INDEX IF NOT EXISTS ref_people_zip_street ON ref_people (zip5, street_key)
      WHERE street_key IS NOT NULL;
    CREATE INDEX IF NOT EXISTS ref_people_city_street ON ref_people (state, city_key, street_key)
      WHERE street_key IS NOT NULL;
    CREATE INDEX IF NOT EXISTS ref_people_household ON ref_people (household, id) WHERE household IS NOT NULL;
  `);
}

/** The index names above, for dropping them before a bulk load into an empty store. */
export const REFERENCE_INDEXES = [
  'ref_emails_md5',
  'ref_emails_sha1',
  'ref_emails_person',
  'ref_people_zip_street',
  'ref_people_city_street',
  'ref_people_household',
] as const;
