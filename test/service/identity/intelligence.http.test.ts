// E5 `GET /v5/td` and E6 `POST /v5/ei/bulk` through HTTP against a real service whose reference data was
// imported from CSV files, in the key configurations that change the answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EAM_UNKNOWN_ADDRESS, intelligenceResultSchema } from '../../../shared/api/intelligence.js';
import { startTestService, tempDir, type TestService } from '../../helpers/service.js';
import { getJson, importFixture, md5, postJson, query, sha1 } from './fixture.js';

const JANE = {
  age: '35-44',
  gender: 'Female',
  zip: '62704',
  household_income: '50k-75k',
  net_worth: '100k-250k',
  occupation: 'Teacher',
  rfm_avg_dollars: 120,
  rfm_last_order: '2024-05-01',
  financial_segment: 'Active Savers',
  interests: { travel: true },
};
const JANE_POSTAL = {
  first_name: 'Jane',
  last_name: 'Doe',
  address: '12 Main Street',
  city: 'Springfield',
  state: 'IL',
  zip: '62704-1234',
};

describe('email intelligence and activity metrics over HTTP (E5, E6)', () => {
  let service: TestService;
  let dir: { path: string; remove(): void };
  const keys = {} as Record<
    'intelligence' | 'subset' | 'eam' | 'eamNoMonth' | 'both' | 'withPostal' | 'validation' | 'eam10k',
    string
  >;

  beforeAll(async () => {
    service = await startTestService();
    dir = tempDir();
    await importFixture(service.db, dir.path);
    keys.intelligence = service.key({ services: ['intelligence'] });
    keys.subset = service.key({ services: ['intelligence'], fields: ['age', 'interests'] });
    keys.eam = service.key({ services: ['eam'] });
    keys.eamNoMonth = service.key({ services: ['eam'], fields: ['age'] });
    keys.both = service.key({ services: ['intelligence', 'eam'] });
    keys.withPostal = service.key({ services: ['intelligence', 'postal_append'] });
    keys.validation = service.key({ services: ['validation'] });
    keys.eam10k = service.key({ services: ['eam'], bulkLimit: 10_000 });
  });
  afterAll(async () => {
    await service.close();
    dir.remove();
  });

  const td = (key: string, params: Record<string, string>) =>
    getJson(service.url, `/v5/td?${query({ ...params, api_key: key })}`);

  describe('E5 /v5/td', () => {
    it('finds a person by email, md5_email, sha1_email (lower-cased, white space stripped) and by name + postal', async () => {
      const answers = [
        await td(keys.intelligence, { email: ' Jane.Doe@EXAMPLE.com ' }),
        await td(keys.intelligence, { md5_email: md5('jane.doe@example.com') }),
        await td(keys.intelligence, { sha1_email: sha1('jane.doe@example.com').toUpperCase() }),
        await td(keys.intelligence, { first: 'Jane', last: 'Doe', street: '12 Main St', zip: '62704-1234' }),
        await td(keys.intelligence, {
          first: 'Jane',
          last: 'Doe',
          street: '12 main street',
          city: 'springfield',
          state: 'il',
        }),
      ];
      for (const answer of answers) {
        expect(answer.status).toBe(200);
        expect(answer.body).toEqual(JANE);
        // What we produce passes the strict model of the spec's tables.
        expect(intelligenceResultSchema.strict().safeParse(answer.body).success).toBe(true);
      }
      // Jane's second address finds her too.
      expect((await td(keys.intelligence, { md5_email: md5('jd@example.org') })).body).toEqual(JANE);
    });

    it('gives only the fields enabled for the key (subset vs all) and that the person has', async () => {
      expect((await td(keys.subset, { email: 'jane.doe@example.com' })).body).toEqual({
        age: '35-44',
        interests: { travel: true },
      });
      expect((await td(keys.intelligence, { email: 'jim.doe@example.net' })).body).toEqual({
        age: '18-20',
        gender: 'Male',
        zip: '62704',
      });
    });

    it('limits the answer to `fields`, and 401s a field the key lacks, 400 an unknown field', async () => {
      expect(
        (await td(keys.intelligence, { email: 'jane.doe@example.com', fields: 'gender,zip' })).body,
      ).toEqual({
        gender: 'Female',
        zip: '62704',
      });
      // The spec's sample spelling of financial_segment is accepted in a request.
      expect(
        (await td(keys.intelligence, { email: 'jane.doe@example.com', fields: 'financial_segement' })).body,
      ).toEqual({ financial_segment: 'Active Savers' });
      // Authentication rule 5: data the key does not permit is a 401, and the JSON error names the field.
      const denied = await td(keys.subset, { email: 'jane.doe@example.com', fields: 'age,gender' });
      expect(denied.status).toBe(401);
      expect(denied.body).toEqual({
        error_code: 401,
        error_msg: 'Unauthorized: this API key is not permitted the field gender.',
      });
      const netWorth = await td(keys.subset, { email: 'jane.doe@example.com', fields: 'net_worth' });
      expect(netWorth).toMatchObject({
        status: 401,
        body: { error_msg: expect.stringContaining('net_worth') as string },
      });
      expect((await td(keys.intelligence, { email: 'jane.doe@example.com', fields: 'eam' })).status).toBe(
        401,
      );
      const unknown = await td(keys.intelligence, { email: 'jane.doe@example.com', fields: 'shoe_size' });
      expect(unknown.status).toBe(400);
      expect(unknown.body).toMatchObject({
        error_msg: expect.stringContaining("Unknown field 'shoe_size'") as string,
      });
    });

    it('adds postal_address for a key with postal_append, when the person has a ZIP+4', async () => {
      expect(
        (await td(keys.withPostal, { email: 'jane.doe@example.com', fields: 'age,postal_address' })).body,
      ).toEqual({
        age: '35-44',
        postal_address: JANE_POSTAL,
      });
      expect((await td(keys.withPostal, { email: 'ann.roe@example.com' })).body).toEqual({
        age: '65+',
        gender: 'Female',
        zip: '01970',
      });
    });

    it('EAM key: eam always, with month_last_open only when the key allows it; defaults for an unknown address', async () => {
      const eam = (await td(keys.eam, { email: 'jane.doe@example.com' })).body as {
        eam: Record<string, unknown>;
      };
      expect(Object.keys(eam)).toEqual(['eam']);
      expect(eam.eam).toMatchObject({ longevity: 3, velocity: 2, popularity: 2 });
      expect(eam.eam.month_last_open).toBe(new Date(Date.now() - 5 * 86_400_000).toISOString().slice(0, 7));
      const withoutMonth = (await td(keys.eamNoMonth, { email: 'jane.doe@example.com' })).body as {
        eam: Record<string, unknown>;
      };
      expect(withoutMonth.eam).not.toHaveProperty('month_last_open');
      expect(withoutMonth.eam).toMatchObject({ longevity: 3, velocity: 2, popularity: 2 });
      for (const params of [
        { email: 'nobody@example.com' },
        { md5_email: md5('nobody@example.com') },
      ] as Record<string, string>[])
        expect((await td(keys.eam, params)).body).toEqual({ eam: EAM_UNKNOWN_ADDRESS });
      // An intelligence-only key gets {} for the same unknown address, and no eam for a known one.
      expect((await td(keys.intelligence, { email: 'nobody@example.com' })).body).toEqual({});
      expect((await td(keys.intelligence, { email: 'jane.doe@example.com' })).body).not.toHaveProperty('eam');
    });

    it('both services: the fields and eam; a postal match gets the eam of the person’s first address', async () => {
      const both = (await td(keys.both, { first: 'Jane', last: 'Doe', street: '12 Main St', zip: '62704' }))
        .body as Record<string, unknown>;
      expect(both).toMatchObject({ ...JANE, eam: { longevity: 3, popularity: 2 } });
    });

    it('format=html pretty-prints the answer for a browser, escaped', async () => {
      const page = await td(keys.intelligence, { email: 'jane.doe@example.com', format: 'html' });
      expect(page.status).toBe(200);
      expect(page.type).toBe('text/html; charset=utf-8');
      expect(page.body).toContain('<pre>{\n  &quot;age&quot;: &quot;35-44&quot;,');
      expect(page.body).not.toMatch(/<pre>[^<]*"/);
      expect((await td(keys.intelligence, { email: 'jane.doe@example.com', format: 'xml' })).status).toBe(
        400,
      );
    });

    it('per-record errors: Invalid identifier. for a malformed email or hash, the postal address error', async () => {
      for (const params of [{ email: 'jane.doe@' }, { md5_email: 'abc' }, { sha1_email: md5('x') }] as Record<
        string,
        string
      >[])
        expect(await td(keys.intelligence, params)).toMatchObject({
          status: 400,
          body: { error_code: 400, error_msg: 'Invalid identifier.' },
        });
      expect(
        await td(keys.intelligence, { first: 'Jane', last: 'Doe', street: '1 Unknown St', zip: '62704' }),
      ).toMatchObject({ status: 400, body: { error_msg: 'Invalid United States postal address.' } });
      // A known address, but nobody of that name: no match.
      expect(
        (await td(keys.intelligence, { first: 'Zed', last: 'Doe', street: '12 Main St', zip: '62704' })).body,
      ).toEqual({});
    });

    it('answers a blank or space-only email with a 400 per-record Invalid identifier.', async () => {
      for (const email of ['', ' ', '  \t '])
        expect(await td(keys.intelligence, { email })).toMatchObject({
          status: 400,
          body: { error_code: 400, error_msg: 'Invalid identifier.' },
        });
    });

    it('400 for malformed percent-encoding, naming the parameter', async () => {
      const res = await getJson(service.url, `/v5/td?email=a%ZZb%40example.com&api_key=${keys.intelligence}`);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        error_code: 400,
        error_msg: expect.stringContaining("parameter 'email'") as string,
      });
      expect(JSON.stringify(res.body)).not.toContain(keys.intelligence);
    });

    it('401, 403 for a key with neither intelligence nor eam, 400 without any identity', async () => {
      expect((await td(`${keys.intelligence}x`, { email: 'jane.doe@example.com' })).status).toBe(401);
      const denied = await td(keys.validation, { email: 'jane.doe@example.com' });
      expect(denied.status).toBe(403);
      expect(denied.body).toMatchObject({ error_msg: expect.stringContaining('intelligence') as string });
      expect((await td(keys.intelligence, { first: 'Jane', last: 'Doe' })).status).toBe(400);
      expect((await td(keys.intelligence, {})).status).toBe(400);
    });
  });

  describe('E6 /v5/ei/bulk', () => {
    const bulk = (key: string, body: unknown, headers?: Record<string, string>, extra = '') =>
      postJson(service.url, `/v5/ei/bulk?api_key=${key}${extra}`, body, headers);

    it('answers in request order: results, {} for no match, per-record errors', async () => {
      const { status, body } = await bulk(keys.intelligence, [
        { email: 'nobody@example.com' },
        { sha1_email: sha1('jane.doe@example.com') },
        { email: 'x@' },
        { first: 'Jim', last: 'Doe', street: '12 Main St', zip: 62704 },
        { first: 'Jim', last: 'Doe', street: '13 Main St', zip: '62704' },
        'jane.doe@example.com',
        { email: { nested: true } },
      ]);
      expect(status).toBe(200);
      expect(body).toEqual([
        {},
        JANE,
        { error_code: 400, error_msg: 'Invalid identifier.' },
        { age: '18-20', gender: 'Male', zip: '62704' },
        { error_code: 400, error_msg: 'Invalid United States postal address.' },
        { error_code: 400, error_msg: expect.stringContaining('Record 6 is not an object') as string },
        { error_code: 400, error_msg: "Record 7: parameter 'email' must be a string." },
      ]);
    });

    it('applies `fields` from the query string', async () => {
      expect(
        (await bulk(keys.intelligence, [{ email: 'jane.doe@example.com' }], undefined, '&fields=age')).body,
      ).toEqual([{ age: '35-44' }]);
    });

    it('applies `fields` inside each record (E5’s parameters), with per-record 400 and 401', async () => {
      const { status, body } = await bulk(keys.subset, [
        { email: 'jane.doe@example.com', fields: 'age' },
        { email: 'jane.doe@example.com', fields: ['interests'] },
        { email: 'jane.doe@example.com' },
        { email: 'jane.doe@example.com', fields: 'net_worth' },
        { email: 'jane.doe@example.com', fields: 'shoe_size' },
        { email: 'jane.doe@example.com', fields: 7 },
      ]);
      expect(status).toBe(200);
      expect(body).toEqual([
        { age: '35-44' },
        { interests: { travel: true } },
        { age: '35-44', interests: { travel: true } },
        { error_code: 401, error_msg: 'Unauthorized: this API key is not permitted the field net_worth.' },
        { error_code: 400, error_msg: expect.stringContaining("Unknown field 'shoe_size'") as string },
        { error_code: 400, error_msg: expect.stringContaining("Record 6: parameter 'fields'") as string },
      ]);
    });

    it('answers a blank or space-only email with the per-record Invalid identifier.', async () => {
      for (const key of [keys.intelligence, keys.eam]) {
        const { status, body } = await bulk(key, [{ email: '' }, { email: '   ' }, { email: '\t' }]);
        expect(status).toBe(200);
        expect(body).toEqual(Array(3).fill({ error_code: 400, error_msg: 'Invalid identifier.' }));
      }
    });

    it('400 Invalid JSON for a missing content type or a broken body; Too many records above 5,000', async () => {
      const records = [{ email: 'jane.doe@example.com' }];
      for (const headers of [{}, { 'content-type': 'text/plain' }] as Record<string, string>[])
        expect(await bulk(keys.intelligence, records, headers)).toMatchObject({
          status: 400,
          body: { error_code: 400, error_msg: 'Invalid JSON' },
        });
      expect(await bulk(keys.intelligence, '[{"email": "a@example.com"},]')).toMatchObject({
        status: 400,
        body: { error_msg: 'Invalid JSON' },
      });
      // A charset parameter is still JSON.
      expect(
        (await bulk(keys.intelligence, records, { 'content-type': 'application/json; charset=utf-8' }))
          .status,
      ).toBe(200);
      const many = Array.from({ length: 5001 }, (_, i) => ({ email: `p${i}@example.com` }));
      expect(await bulk(keys.intelligence, many)).toMatchObject({
        status: 400,
        body: { error_msg: 'Too many records requested. Limit is 5000 and you requested 5001.' },
      });
      const fine = await bulk(keys.intelligence, many.slice(0, 5000));
      expect(fine.status).toBe(200);
      expect(fine.body).toHaveLength(5000);
    });

    it('activity-metrics key: unique identifiers (email and its hash count as one), address-only records, its own limit and text', async () => {
      const dup = await bulk(keys.eam, [
        { email: 'jane.doe@example.com' },
        { md5_email: md5('jane.doe@example.com') },
      ]);
      expect(dup).toMatchObject({
        status: 400,
        body: { error_code: 400, error_msg: 'Duplicate identfiers' },
      });
      // The same duplicates are fine for an intelligence key.
      expect(
        (
          await bulk(keys.intelligence, [
            { email: 'jane.doe@example.com' },
            { email: 'JANE.DOE@example.com' },
          ])
        ).body,
      ).toEqual([JANE, JANE]);
      const { body } = await bulk(keys.eam, [
        { email: 'lurker@example.com' },
        { email: 'bad@' },
        { first: 'Jane', last: 'Doe', street: '12 Main St', zip: '62704' },
        { email: 'nobody@example.com' },
      ]);
      expect(body).toEqual([
        { eam: expect.objectContaining({ longevity: 1, velocity: 1, popularity: 1 }) as unknown },
        { error_code: 400, error_msg: "Value of parameter 'email' is invalid." },
        { error_code: 400, error_msg: expect.stringContaining('looked up by address') as string },
        { eam: EAM_UNKNOWN_ADDRESS },
      ]);
      const many = Array.from({ length: 10_001 }, (_, i) => ({ email: `p${i}@example.com` }));
      expect(await bulk(keys.eam10k, many)).toMatchObject({
        status: 400,
        body: { error_msg: 'Too many records requested. Limit is 10000 and you requested 10001.' },
      });
      expect((await bulk(keys.eam10k, many.slice(0, 10_000))).status).toBe(200);
      expect((await bulk(keys.eam, many.slice(0, 5001))).body).toMatchObject({
        error_msg: 'Too many records requested. Limit is 5000 and you requested 5001.',
      });
    });

    it('401 for a wrong key, 403 for a key without intelligence or eam', async () => {
      expect((await bulk(`${keys.intelligence}x`, [])).status).toBe(401);
      expect((await bulk(keys.validation, [])).status).toBe(403);
    });
  });
});
