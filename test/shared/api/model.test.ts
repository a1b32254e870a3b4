import { describe, expect, it } from 'vitest';
import {
  AGE_RANGES,
  DUPLICATE_IDENTIFIERS,
  EAM_UNKNOWN_ADDRESS,
  FINANCIAL_GROUPS,
  FINANCIAL_SEGMENTS,
  INTELLIGENCE_ENUMERATIONS,
  INTELLIGENCE_FIELDS,
  INTELLIGENCE_FIELD_SCHEMAS,
  INTEREST_NAMES,
  LENGTHS_OF_RESIDENCE,
  LIFE_STAGE_GROUPS,
  LIFE_STAGE_SEGMENTS,
  OCCUPATIONS,
  alternateEmailResultSchema,
  effectiveDelimiter,
  eamSchema,
  identityRouteOf,
  intelligenceBulkResponseSchema,
  intelligenceResponseSchema,
  intelligenceResultSchema,
  isFinalListStatus,
  isRecordError,
  listProgress,
  listResourceSchema,
  postalAddressSchema,
  purchaseRequestSchema,
  submitListParamsSchema,
  submitListQueryPairs,
  submitListQuerySchema,
  tooManyRecords,
  verifyResponseSchema,
} from '../../../shared/api/index.js';

describe('intelligence enumerations', () => {
  it('has as many values as the spec counts, with no duplicates', () => {
    const counts: [readonly string[], number][] = [
      [LIFE_STAGE_SEGMENTS, 70],
      [LIFE_STAGE_GROUPS, 21],
      [FINANCIAL_SEGMENTS, 54],
      [FINANCIAL_GROUPS, 13],
      [INTEREST_NAMES, 22],
      [LENGTHS_OF_RESIDENCE, 14],
      [OCCUPATIONS, 17],
      [AGE_RANGES, 7],
    ];
    for (const [values, expected] of counts) {
      expect(values).toHaveLength(expected);
      expect(new Set(values).size).toBe(expected);
    }
  });

  it('spells length of residence as the spec does', () => {
    expect(LENGTHS_OF_RESIDENCE[0]).toBe('Less than 1 year');
    expect(LENGTHS_OF_RESIDENCE).toContain('1 Year');
    expect(LENGTHS_OF_RESIDENCE).toContain('7 Years');
    expect(LENGTHS_OF_RESIDENCE.slice(-3)).toEqual(['11-15 years', '16-19 years', '20+ years']);
  });

  it('names every tabled field once, and has a strict schema for each scalar one', () => {
    expect(new Set(INTELLIGENCE_FIELDS).size).toBe(INTELLIGENCE_FIELDS.length);
    for (const field of INTELLIGENCE_FIELDS) {
      if (field !== 'interests') expect(INTELLIGENCE_FIELD_SCHEMAS[field]).toBeDefined();
    }
    for (const [field, values] of Object.entries(INTELLIGENCE_ENUMERATIONS)) {
      const schema = INTELLIGENCE_FIELD_SCHEMAS[field as keyof typeof INTELLIGENCE_FIELD_SCHEMAS];
      for (const value of values) expect(schema.safeParse(value).success).toBe(true);
      expect(schema.safeParse('not a value').success).toBe(false);
    }
  });

  it('checks formats strictly: dates, ZIP codes, EAM ranges', () => {
    expect(INTELLIGENCE_FIELD_SCHEMAS.rfm_last_order.safeParse('2023-02-30').success).toBe(false);
    expect(INTELLIGENCE_FIELD_SCHEMAS.rfm_last_order.safeParse('2023-02-28').success).toBe(true);
    expect(INTELLIGENCE_FIELD_SCHEMAS.zip.safeParse('12345-6789').success).toBe(true);
    expect(INTELLIGENCE_FIELD_SCHEMAS.zip.safeParse('1234').success).toBe(false);
    expect(postalAddressSchema.shape.zip.safeParse('12345').success).toBe(false);
    expect(eamSchema.safeParse(EAM_UNKNOWN_ADDRESS).success).toBe(true);
    expect(eamSchema.safeParse({ ...EAM_UNKNOWN_ADDRESS, longevity: 4 }).success).toBe(false);
    expect(eamSchema.safeParse({ ...EAM_UNKNOWN_ADDRESS, velocity: 11 }).success).toBe(false);
    expect(eamSchema.safeParse({ ...EAM_UNKNOWN_ADDRESS, month_last_open: '2024-13' }).success).toBe(false);
    expect(
      eamSchema.safeParse({
        date_first_seen: '2019-04-01',
        longevity: 3,
        velocity: 7,
        popularity: 2,
        month_last_open: '2024-03',
      }).success,
    ).toBe(true);
  });

  it('takes interests only as true in the strict result', () => {
    expect(intelligenceResultSchema.safeParse({ interests: { travel: true, pets: true } }).success).toBe(
      true,
    );
    expect(intelligenceResultSchema.safeParse({ interests: { travel: false } }).success).toBe(false);
    expect(intelligenceResultSchema.safeParse({ interests: { knitting: true } }).success).toBe(false);
  });
});

describe('intelligence responses, read tolerantly', () => {
  it('renames the misspelt financial_segement to financial_segment', () => {
    const parsed = intelligenceResponseSchema.parse({ age: '35-44', financial_segement: 'Deal Seekers' });
    expect(parsed.financial_segment).toBe('Deal Seekers');
    expect(parsed).not.toHaveProperty('financial_segement');
  });

  it('keeps the correct spelling when both are present', () => {
    const parsed = intelligenceResponseSchema.parse({
      financial_segment: 'Work and Save',
      financial_segement: 'x',
    });
    expect(parsed.financial_segment).toBe('Work and Save');
    expect(parsed).not.toHaveProperty('financial_segement');
  });

  it('keeps unknown fields, unknown interests and values outside the enumerations', () => {
    const parsed = intelligenceResponseSchema.parse({
      age: '75+',
      movie_genre: 'Drama',
      interests: { travel: true, movies_comedy: true },
      eam: { date_first_seen: 'now', longevity: 0, velocity: 0, popularity: 0 },
    });
    expect(parsed.age).toBe('75+');
    expect(parsed['movie_genre']).toBe('Drama');
    expect(parsed.interests?.['movies_comedy']).toBe(true);
  });

  it('reads a bulk answer of results, empty objects and per-record errors in order', () => {
    const parsed = intelligenceBulkResponseSchema.parse([
      { gender: 'Female' },
      {},
      { error_code: 400, error_msg: 'Invalid identifier.' },
    ]);
    expect(parsed.map(isRecordError)).toEqual([false, false, true]);
    expect(parsed[2]).toEqual({ error_code: 400, error_msg: 'Invalid identifier.' });
  });

  it('strict identity results take {} for no match', () => {
    expect(alternateEmailResultSchema.safeParse({}).success).toBe(true);
    expect(
      alternateEmailResultSchema.safeParse({
        alternate_email: [{ email: 'a@b.co', email_match_type: 'Household' }],
      }).success,
    ).toBe(true);
    expect(
      alternateEmailResultSchema.safeParse({
        alternate_email: [{ email: 'a@b.co', email_match_type: 'Cousin' }],
      }).success,
    ).toBe(false);
  });
});

describe('verification responses', () => {
  it('tolerates a status code this version does not know', () => {
    const parsed = verifyResponseSchema.safeParse({
      safe_to_send: { address: 'a@b.co', status: 'valid', status_code: 777, domain_type: 'spacecraft' },
    });
    expect(parsed.success).toBe(true);
  });
});

describe('errors', () => {
  it('builds the bulk 400 texts as the spec writes them', () => {
    expect(tooManyRecords(10000, 10001)).toBe(
      'Too many records requested. Limit is 10000 and you requested 10001.',
    );
    expect(DUPLICATE_IDENTIFIERS).toBe('Duplicate identfiers');
    expect(isRecordError({ error_code: 400, error_msg: 'x' })).toBe(true);
    expect(isRecordError({ error_code: '400', error_msg: 'x' })).toBe(false);
    expect(isRecordError({})).toBe(false);
  });
});

const statusDocument = {
  list_id: 42,
  name: 'customers.csv',
  status: 'Results',
  records: 3,
  size_bytes: 120,
  created_at: '2024-05-01T10:00:00Z',
  services: {
    email_validation: {
      input_count: 3,
      completed_count: 3,
      status: 'Completed',
      reporting: {
        statuses: { Valid: 1, Invalid: 1, Unknown: 1 },
        invalid_categories: { 'Syntax Errors': 1 },
        domain_type: { 'Free ISP': 2, Unknown: 1 },
        role_accounts: 0,
        status_codes: { '50': 1, '150': 1, '777': 1 },
        trap_hits: { 'Trap Hits': 0 },
      },
    },
  },
};

describe('the list resource', () => {
  it('reads a full status document', () => {
    const list = listResourceSchema.parse(statusDocument);
    expect(list.services.email_validation?.reporting?.statuses?.Valid).toBe(1);
    expect(list.services.email_validation?.reporting?.status_codes?.['777']).toBe(1);
    expect(isFinalListStatus(list.status)).toBe(true);
    expect(listProgress(list)).toEqual({ completed: 3, total: 3 });
  });

  it('keeps unknown members at every level, and our reason', () => {
    const list = listResourceSchema.parse({
      ...statusDocument,
      status: 'Archived',
      reason: 'The file has no email column.',
      owner: 'someone',
      services: {
        ...statusDocument.services,
        email_validation: { ...statusDocument.services.email_validation, eta_seconds: 12 },
        phone_validation: { input_count: 1, completed_count: 0, status: 'Queued' },
      },
    });
    expect(list.status).toBe('Archived');
    expect(list.reason).toBe('The file has no email column.');
    expect(list['owner']).toBe('someone');
    expect(list.services['phone_validation']).toEqual({
      input_count: 1,
      completed_count: 0,
      status: 'Queued',
    });
    expect(list.services.email_validation?.['eta_seconds']).toBe(12);
    expect(isFinalListStatus(list.status)).toBe(false);
  });

  it('reads domain_types (the attribute table spelling) as domain_type', () => {
    const list = listResourceSchema.parse({
      ...statusDocument,
      services: {
        email_validation: {
          ...statusDocument.services.email_validation,
          reporting: { domain_types: { Business: 4 } },
        },
      },
    });
    expect(list.services.email_validation?.reporting?.domain_type?.Business).toBe(4);
  });

  it('refuses a document without a list id', () => {
    const { list_id: _, ...rest } = statusDocument;
    expect(listResourceSchema.safeParse(rest).success).toBe(false);
  });
});

describe('E7 parameters', () => {
  it('enforces the name extension, one-character delimiter and callback URL rules', () => {
    const ok = (params: object) => submitListParamsSchema.safeParse(params).success;
    expect(ok({ name: 'list.CSV' })).toBe(true);
    expect(ok({ name: 'list.zip' })).toBe(true);
    expect(ok({ name: 'list.xlsx' })).toBe(false);
    expect(ok({ name: '.csv' })).toBe(false);
    expect(ok({ delimiter: ';' })).toBe(true);
    expect(ok({ delimiter: '\t' })).toBe(true);
    expect(ok({ delimiter: ';;' })).toBe(false);
    expect(ok({ delimiter: '' })).toBe(false);
    expect(ok({ callback_url: 'https://example.com/hook' })).toBe(true);
    expect(ok({ callback_url: 'ftp://example.com/hook' })).toBe(false);
    expect(ok({ callback_url: 'not a url' })).toBe(false);
    expect(ok({ callback_url: `https://example.com/${'a'.repeat(492)}` })).toBe(true); // 512 characters
    expect(ok({ callback_url: `https://example.com/${'a'.repeat(493)}` })).toBe(false);
    expect(ok({ email_column: 0 })).toBe(false);
  });

  it('parses the query string the service receives, and round-trips the client pairs', () => {
    const params = {
      email_column: 2,
      header: true,
      delimiter: ';',
      report: false,
      name: 'customers.csv',
      fields: ['age', 'gender'],
      callback_url: 'https://example.com/hook?x=1',
    };
    const query = Object.fromEntries(submitListQueryPairs(params));
    expect(submitListQuerySchema.parse(query)).toEqual(params);
    expect(submitListQuerySchema.parse({ action: 'report' })).toEqual({ report: true });
    expect(submitListQuerySchema.safeParse({ email_column: 'two' }).success).toBe(false);
    expect(submitListQuerySchema.safeParse({ header: 'perhaps' }).success).toBe(false);
  });

  it('reads with a comma for .csv and a tab otherwise, unless told', () => {
    expect(effectiveDelimiter({}, 'a.csv')).toBe(',');
    expect(effectiveDelimiter({}, 'a.txt')).toBe('\t');
    expect(effectiveDelimiter({ delimiter: '|' }, 'a.csv')).toBe('|');
  });

  it('takes the purchase body of E9', () => {
    expect(purchaseRequestSchema.safeParse({}).success).toBe(true);
    expect(
      purchaseRequestSchema.safeParse({ fields: ['age'], options: { email_append: { match_type: 'H' } } })
        .success,
    ).toBe(true);
    expect(purchaseRequestSchema.safeParse({ options: { email_append: { match_type: 'X' } } }).success).toBe(
      false,
    );
  });
});

describe('person queries', () => {
  it('finds the identity route', () => {
    expect(identityRouteOf({ email: 'a@b.co' })).toBe('email');
    expect(identityRouteOf({ md5_email: 'a'.repeat(32) })).toBe('md5_email');
    expect(identityRouteOf({ first: 'Ann', last: 'Lee', street: '1 Main St', zip: '12345' })).toBe('postal');
    expect(identityRouteOf({ first: 'Ann', street: '1 Main St', zip: '12345' })).toBeUndefined();
    expect(identityRouteOf({})).toBeUndefined();
  });
});
