// E2 `GET /ae`, E3 `GET /v5/eppend`, E4 `POST /v5/eppend/bulk` through HTTP against a real service whose
// reference data was imported from CSV files.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INVALID_API_KEY } from '../../../shared/api/errors.js';
import { startTestService, tempDir, type TestService } from '../../helpers/service.js';
import { getJson, importFixture, postJson, query } from './fixture.js';

describe('identity matching over HTTP (E2–E4)', () => {
  let service: TestService;
  let dir: { path: string; remove(): void };
  const keys = {} as Record<'all3' | 'alt1' | 'postalOnly' | 'appendOnly' | 'intelligence', string>;

  beforeAll(async () => {
    service = await startTestService();
    dir = tempDir();
    await importFixture(service.db, dir.path);
    keys.all3 = service.key({
      services: ['alternate_email', 'email_append', 'postal_append'],
      alternateMax: 3,
    });
    keys.alt1 = service.key({ services: ['alternate_email'] });
    keys.postalOnly = service.key({ services: ['postal_append'] });
    keys.appendOnly = service.key({ services: ['email_append'] });
    keys.intelligence = service.key({ services: ['intelligence'] });
  });
  afterAll(async () => {
    await service.close();
    dir.remove();
  });

  describe('E2 /ae', () => {
    const ae = (key: string, email: string) => getJson(service.url, `/ae?${query({ email, api_key: key })}`);

    it('gives Individual matches before Household ones, up to the key’s alternate max (3)', async () => {
      const { status, body } = await ae(keys.all3, 'Jane.Doe@Example.com');
      expect(status).toBe(200);
      expect(body).toEqual({
        alternate_email: [
          { email: 'jd@example.org', email_match_type: 'Individual' },
          { email: 'john.doe@example.com', email_match_type: 'Household' },
          { email: 'jim.doe@example.net', email_match_type: 'Household' },
        ],
      });
    });

    it('stops at the default alternate max of 1', async () => {
      expect((await ae(keys.alt1, 'jane.doe@example.com')).body).toEqual({
        alternate_email: [{ email: 'jd@example.org', email_match_type: 'Individual' }],
      });
      // John has no other address of his own: his first match is a household member's.
      expect((await ae(keys.alt1, 'john.doe@example.com')).body).toEqual({
        alternate_email: [{ email: 'jane.doe@example.com', email_match_type: 'Household' }],
      });
    });

    it('answers {} for an address without alternates or unknown, and Invalid identifier. for a malformed one', async () => {
      expect(await ae(keys.all3, 'ann.roe@example.com')).toMatchObject({ status: 200, body: {} });
      expect(await ae(keys.all3, 'nobody@example.com')).toMatchObject({ status: 200, body: {} });
      expect(await ae(keys.all3, 'not an address')).toMatchObject({
        status: 400,
        body: { error_code: 400, error_msg: 'Invalid identifier.' },
      });
    });

    it('answers a blank or space-only email with the per-record Invalid identifier. (400)', async () => {
      for (const email of ['', ' ', '\t\r\n'])
        expect(await ae(keys.all3, email)).toMatchObject({
          status: 400,
          body: { error_code: 400, error_msg: 'Invalid identifier.' },
        });
    });

    it('400 for malformed percent-encoding rather than a lookup of the text as sent', async () => {
      for (const email of ['a%ZZb%40example.com', 'a%40example.com%', 'a%FF%40example.com']) {
        const res = await getJson(service.url, `/ae?email=${email}&api_key=${keys.all3}`);
        expect(res.status, email).toBe(400);
        expect(res.body).toMatchObject({ error_msg: expect.stringContaining('percent-encoding') as string });
      }
    });

    it('401 for a wrong key, 403 for a key without alternate_email, 400 without email', async () => {
      const wrong = await ae(`${keys.all3}x`, 'jane.doe@example.com');
      expect(wrong).toMatchObject({ status: 401, body: INVALID_API_KEY });
      const denied = await ae(keys.postalOnly, 'jane.doe@example.com');
      expect(denied.status).toBe(403);
      expect(denied.body).toMatchObject({ error_msg: expect.stringContaining('alternate_email') as string });
      const missing = await getJson(service.url, `/ae?api_key=${keys.all3}`);
      expect(missing.status).toBe(400);
      expect(missing.body).toMatchObject({ error_msg: expect.stringContaining("'email'") as string });
    });
  });

  describe('E3 /v5/eppend', () => {
    const eppend = (key: string, params: Record<string, string>) =>
      getJson(service.url, `/v5/eppend?${query({ ...params, api_key: key })}`);
    const janeAddress = { street: '12 Main St', city: 'Springfield', state: 'IL', zip: '62704' };

    it('postal append gives the 9-digit ZIP address of the address’s person', async () => {
      expect((await eppend(keys.postalOnly, { email: 'jd@example.org' })).body).toEqual({
        postal_address: {
          first_name: 'Jane',
          last_name: 'Doe',
          address: '12 Main Street',
          city: 'Springfield',
          state: 'IL',
          zip: '62704-1234',
        },
      });
    });

    it('postal append answers {} when only a 5-digit ZIP is known, or the address is unknown', async () => {
      expect((await eppend(keys.postalOnly, { email: 'ann.roe@example.com' })).body).toEqual({});
      expect((await eppend(keys.postalOnly, { email: 'jim.doe@example.net' })).body).toEqual({});
      expect((await eppend(keys.postalOnly, { email: 'nobody@example.com' })).body).toEqual({});
      expect(await eppend(keys.postalOnly, { email: 'jane@@example.com' })).toMatchObject({
        status: 400,
        body: { error_code: 400, error_msg: 'Invalid identifier.' },
      });
    });

    it('email append: Individual for the full name at the address (then Household), Household for the last name', async () => {
      expect((await eppend(keys.appendOnly, { first: 'jane', last: 'DOE', ...janeAddress })).body).toEqual({
        email_append: [
          { email: 'jane.doe@example.com', email_match_type: 'Individual' },
          { email: 'jd@example.org', email_match_type: 'Individual' },
          { email: 'john.doe@example.com', email_match_type: 'Household' },
          { email: 'jim.doe@example.net', email_match_type: 'Household' },
        ],
      });
      // City and state instead of the ZIP; an unknown first name of that family is a Household match only.
      const { zip: _zip, ...byCity } = janeAddress;
      expect((await eppend(keys.appendOnly, { first: 'Jill', last: 'Doe', ...byCity })).body).toEqual({
        email_append: [
          { email: 'jane.doe@example.com', email_match_type: 'Household' },
          { email: 'john.doe@example.com', email_match_type: 'Household' },
          { email: 'jim.doe@example.net', email_match_type: 'Household' },
        ],
      });
      // Someone else at a known address: no match.
      expect((await eppend(keys.appendOnly, { first: 'Jane', last: 'Smith', ...janeAddress })).body).toEqual(
        {},
      );
      // A person without an email: nothing to append.
      expect(
        (await eppend(keys.appendOnly, { first: 'Bob', last: 'Poe', street: '3 Oak Ln #4', zip: '97201' }))
          .body,
      ).toEqual({});
    });

    it('Invalid United States postal address. for an address the reference data does not know or a malformed one', async () => {
      const invalid = {
        status: 400,
        body: { error_code: 400, error_msg: 'Invalid United States postal address.' },
      };
      const name = { first: 'Jane', last: 'Doe' };
      expect(
        await eppend(keys.appendOnly, { ...name, ...janeAddress, street: '99 Nowhere Rd' }),
      ).toMatchObject(invalid);
      expect(await eppend(keys.appendOnly, { ...name, ...janeAddress, zip: '6270' })).toMatchObject(invalid);
      expect(await eppend(keys.appendOnly, { ...name, ...janeAddress, state: 'XX' })).toMatchObject(invalid);
      // The street is known in that ZIP, but not in the state given.
      expect(await eppend(keys.appendOnly, { ...name, ...janeAddress, state: 'CA' })).toMatchObject(invalid);
    });

    it('403 for the mode the key lacks, 400 for missing parameters', async () => {
      expect((await eppend(keys.appendOnly, { email: 'jane.doe@example.com' })).status).toBe(403);
      expect((await eppend(keys.postalOnly, { first: 'Jane', last: 'Doe', ...janeAddress })).status).toBe(
        403,
      );
      const missing = await eppend(keys.appendOnly, { first: 'Jane', street: '12 Main St' });
      expect(missing.status).toBe(400);
      expect(missing.body).toMatchObject({
        error_msg: 'Missing parameters for email append: last, zip (or city and state).',
      });
      expect((await eppend(keys.appendOnly, {})).status).toBe(400);
    });

    it('answers a blank or space-only email with the per-record Invalid identifier. (400)', async () => {
      for (const key of [keys.all3, keys.postalOnly])
        for (const email of ['', ' ', '  \t'])
          expect(await eppend(key, { email })).toMatchObject({
            status: 400,
            body: { error_code: 400, error_msg: 'Invalid identifier.' },
          });
    });
  });

  describe('E4 /v5/eppend/bulk', () => {
    const bulk = (key: string, body: unknown, headers?: Record<string, string>) =>
      postJson(service.url, `/v5/eppend/bulk?api_key=${key}`, body, headers);

    it('answers each record in order: postal and alternates for an email, email append for a name and address', async () => {
      const { status, body } = await bulk(keys.all3, [
        { email: 'john.doe@example.com' },
        { first: 'Ann', last: 'Roe', street: '7 Elm Ave', zip: '01970' },
        { email: 'nobody@example.com' },
        { email: 'bad' },
        { first: 'Ann', last: 'Roe', street: '8 Elm Ave', zip: '01970' },
        {},
      ]);
      expect(status).toBe(200);
      expect(body).toEqual([
        {
          postal_address: {
            first_name: 'John',
            last_name: 'Doe',
            address: '12 Main St.',
            city: 'Springfield',
            state: 'IL',
            zip: '62704-1234',
          },
          alternate_email: [
            { email: 'jane.doe@example.com', email_match_type: 'Household' },
            { email: 'jd@example.org', email_match_type: 'Household' },
            { email: 'jim.doe@example.net', email_match_type: 'Household' },
          ],
        },
        { email_append: [{ email: 'ann.roe@example.com', email_match_type: 'Individual' }] },
        {},
        { error_code: 400, error_msg: 'Invalid identifier.' },
        { error_code: 400, error_msg: 'Invalid United States postal address.' },
        { error_code: 400, error_msg: expect.stringContaining('Give an email') as string },
      ]);
    });

    it('gives a per-record 403 for a record asking for a service the key lacks', async () => {
      const { body } = await bulk(keys.alt1, [
        { email: 'jane.doe@example.com' },
        { first: 'Jane', last: 'Doe', street: '12 Main St', zip: '62704' },
      ]);
      expect(body).toEqual([
        { alternate_email: [{ email: 'jd@example.org', email_match_type: 'Individual' }] },
        { error_code: 403, error_msg: expect.stringContaining('email_append') as string },
      ]);
    });

    it('400 Invalid JSON without the JSON content type or for a broken body; the 1,250 limit; 403 without identity services', async () => {
      expect(await bulk(keys.all3, [{ email: 'jane.doe@example.com' }], {})).toMatchObject({
        status: 400,
        body: { error_msg: 'Invalid JSON' },
      });
      expect(await bulk(keys.all3, '[{"email":', { 'content-type': 'application/json' })).toMatchObject({
        status: 400,
        body: { error_msg: 'Invalid JSON' },
      });
      const records = Array.from({ length: 1251 }, (_, i) => ({ email: `p${i}@example.com` }));
      expect(await bulk(keys.all3, records)).toMatchObject({
        status: 400,
        body: { error_msg: 'Too many records requested. Limit is 1250 and you requested 1251.' },
      });
      const atLimit = await bulk(keys.all3, records.slice(0, 1250));
      expect(atLimit.status).toBe(200);
      expect(atLimit.body).toHaveLength(1250);
      expect((await bulk(keys.intelligence, [{ email: 'jane.doe@example.com' }])).status).toBe(403);
    });
  });
});
