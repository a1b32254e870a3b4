// Email intelligence (E5, E6), email activity metrics (`eam`), postal append (`postal_address`) and the
// match items of alternate email / email append: the spec's "Email intelligence result" tables.
//
// Two readings of the same model:
// - strict (`intelligenceResultSchema`, `INTELLIGENCE_FIELD_SCHEMAS`): values must be in the spec's
//   enumerations and formats. What our service produces and what imported reference data is checked against.
// - tolerant (`intelligenceResponseSchema`): what a client accepts from a service. Unknown members are kept
//   (the spec says 50+ fields exist beyond the tabled ones), enumerated values are read as plain strings (a
//   provider may add a value; one new income band must not fail a whole answer), and the misspelt field name
//   `financial_segement` of the spec's sample response is renamed to `financial_segment`.
import { z } from 'zod';
import {
  INTELLIGENCE_FIELDS,
  INTEREST_NAMES,
  type IntelligenceField,
  type InterestName,
} from './intelligenceNames.js';

export { INTELLIGENCE_FIELDS, INTEREST_NAMES, type IntelligenceField, type InterestName };

// ---------------------------------------------------------------------------------------------------------
// Enumerations (order as in the spec)

export const AGE_RANGES = ['18-20', '21-24', '25-34', '35-44', '45-54', '55-64', '65+'] as const;
export const GENDERS = ['Male', 'Female'] as const;

export const HOUSEHOLD_INCOMES = [
  '0-15k',
  '15k-25k',
  '25k-35k',
  '35k-50k',
  '50k-75k',
  '75k-100k',
  '100k-150k',
  '150k-175k',
  '175k-200k',
  '200k-250k',
  '250k+',
] as const;

export const NET_WORTHS = [
  '0-5k',
  '5k-10k',
  '10k-25k',
  '25k-50k',
  '50k-100k',
  '100k-250k',
  '250k-500k',
  '500k-1mm',
  '1mm+',
] as const;

export const HOME_MARKET_VALUES = [
  '1k-25k',
  '25k-50k',
  '50k-75k',
  '75k-100k',
  '100k-150k',
  '150k-200k',
  '200k-250k',
  '250k-300k',
  '300k-350k',
  '350k-500k',
  '500k-1mm',
  '1mm+',
] as const;

export const HOME_OWNER_STATUSES = ['Own', 'Rent'] as const;

export const LENGTHS_OF_RESIDENCE = [
  'Less than 1 year',
  '1 Year',
  '2 Years',
  '3 Years',
  '4 Years',
  '5 Years',
  '6 Years',
  '7 Years',
  '8 Years',
  '9 Years',
  '10 Years',
  '11-15 years',
  '16-19 years',
  '20+ years',
] as const;

export const MARITAL_STATUSES = ['Single', 'Married'] as const;
export const PRESENCE_OF_CHILDREN = ['Yes', 'No'] as const;

export const EDUCATIONS = [
  'Completed High School',
  'Attended College',
  'Completed College',
  'Completed Graduate School',
  'Attended Vocational/Technical School',
] as const;

export const OCCUPATIONS = [
  'Blue Collar Worker',
  'Business Owner',
  'Civil Service',
  'Executive/Upper Management',
  'Health Services',
  'Homemaker',
  'Middle Management',
  'Military Personnel',
  'Nurse',
  'Part Time',
  'Professional',
  'Retired',
  'Secretary',
  'Student',
  'Teacher',
  'Technology',
  'White Collar Worker',
] as const;

/** The spec's 70 `life_stage_segment` values. */
export const LIFE_STAGE_SEGMENTS = [
  'Summit Estates',
  'Established Elite',
  'Corporate Connected',
  'Top Professionals',
  'Active & Involved',
  'Casual Comfort',
  'Active Lifestyles',
  'Solid Surroundings',
  'Busy Schedules',
  'Careers & Travel',
  'Schools & Shopping',
  'On the Go',
  'Work & Play',
  'Career Centered',
  'Country Ways',
  'Country Enthusiasts',
  'Firmly Established',
  'Climbing the Ladder',
  'Country Comfort',
  'Carving Out Time',
  'Children First',
  'Comfortable Cornerstones',
  'Good Neighbors',
  'Career Building',
  'Clubs & Causes',
  'Getting Established',
  'Tenured Proprietors',
  'Community Pillars',
  'City Mixers',
  'Out & About',
  'Mid-Americana',
  'Metro Mix',
  'Urban Diversity',
  'Outward Bound',
  'Working & Active',
  'Persistent & Productive',
  'Firm Foundations',
  'Occupational Mix',
  'Setting Goals',
  'Great Outdoors',
  'Rural Adventure',
  'Creative Variety',
  'Work & Causes',
  'Open Houses',
  'Offices & Entertainment',
  'Rural & Active',
  'Rural Parents',
  'Farm & Home',
  'Home & Garden',
  'Rural Community',
  'Role Models',
  'Stylish & Striving',
  'Metro Strivers',
  'Work & Outdoors',
  'Community Life',
  'Metro Active',
  'Collegiate Crowd',
  'Outdoor Fervor',
  'Mobile Mixers',
  'Rural & Mobile',
  'City Life',
  'Movies & Sports',
  'Staying Home',
  'Practical & Careful',
  'Hobbies & Shopping',
  'Helping Hands',
  'First Steps',
  'Staying Healthy',
  'Productive Havens',
  'Favorably Frugal',
] as const;

/** The spec's 21 `life_stage_group` values. */
export const LIFE_STAGE_GROUPS = [
  'Starting Out',
  'Taking Hold',
  'Settling Down',
  'Social Connectors',
  'Busy Households',
  'Working & Studying',
  'Career Oriented',
  'Large Households',
  'Comfortable Independence',
  'Rural-Metro Mix',
  'Affluent Households',
  'Comfortable Households',
  'Working Households',
  'Diverging Paths',
  'Top Wealth',
  'Living Well',
  'Bargain Hunters',
  'Thrifty and Active',
  'Solid Prestige',
  'Community Minded',
  'Leisure Seekers',
] as const;

/** The spec's 54 `financial_segment` values. */
export const FINANCIAL_SEGMENTS = [
  'Involved Investors',
  'Active Savers',
  'Traditional Savers',
  'Informed Control',
  'Solid Investments',
  'Hearth and Home',
  'Online Financiers',
  'Investing in Collections',
  'Adventurous Investors',
  'Comfortable Borrowers',
  'Personal Service',
  'Branded Influence',
  'Asking Advice',
  'Value Shoppers',
  'Brand Variety',
  'Online Automation',
  'Online Learners',
  'Trust Triumphs',
  'Limited Risk Traditionalists',
  'Thrill of the Ride',
  'Learn and Prepare',
  'Naturally Organized',
  'Eye on the Economy',
  'Daily Demands',
  'Balance Vigilant',
  'Comfort Zone',
  'Online Managers',
  'Quality Conscious',
  'Traction for Today',
  'In the Moment',
  'Collectors Clubs',
  'Quality over Price',
  'Studied Purchasers',
  'Deal Seekers',
  'Worth the Risk',
  'Online Influencers',
  'Sophisticated Environmentalists',
  'Budget Optimists',
  'Spontaneous Spenders',
  'Coupon Cutters',
  'Fluent Advisors',
  'Financial Freewheelers',
  'Real Life Recommendations',
  'Civic Centered',
  'Prestige Seekers',
  'Informed Shoppers',
  'Technology Trenders',
  'Future Fundamentals',
  'Online Leaders',
  'Online Connectors',
  'Traditional Moderation',
  'Work and Save',
  'Temperate Technology',
  'Independent Investors',
] as const;

/** The spec's 13 `financial_group` values. */
export const FINANCIAL_GROUPS = [
  'Market Watchers',
  'Conservative Wealth',
  'Specific Savers',
  'Tried and True',
  'Trendy Inclinations',
  'Current Consumers',
  'Rural Trust',
  'City Spotlight',
  'Career Conscious',
  'Digital Financiers',
  'Financial Futures',
  'Stable Influentials',
  'Conservatively Rural',
] as const;

export const EMAIL_MATCH_TYPES = ['Individual', 'Household'] as const;

export type AgeRange = (typeof AGE_RANGES)[number];
export type Gender = (typeof GENDERS)[number];
export type HouseholdIncome = (typeof HOUSEHOLD_INCOMES)[number];
export type NetWorth = (typeof NET_WORTHS)[number];
export type HomeMarketValue = (typeof HOME_MARKET_VALUES)[number];
export type HomeOwnerStatus = (typeof HOME_OWNER_STATUSES)[number];
export type LengthOfResidence = (typeof LENGTHS_OF_RESIDENCE)[number];
export type MaritalStatus = (typeof MARITAL_STATUSES)[number];
export type PresenceOfChildren = (typeof PRESENCE_OF_CHILDREN)[number];
export type Education = (typeof EDUCATIONS)[number];
export type Occupation = (typeof OCCUPATIONS)[number];
export type LifeStageSegment = (typeof LIFE_STAGE_SEGMENTS)[number];
export type LifeStageGroup = (typeof LIFE_STAGE_GROUPS)[number];
export type FinancialSegment = (typeof FINANCIAL_SEGMENTS)[number];
export type FinancialGroup = (typeof FINANCIAL_GROUPS)[number];
export type EmailMatchType = (typeof EMAIL_MATCH_TYPES)[number];

// ---------------------------------------------------------------------------------------------------------
// Formats

/** `YYYY-MM-DD`, a real calendar date. */
export const isoDateSchema = z.iso.date();
/** `YYYY-MM`. */
export const isoMonthSchema = z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'Expected YYYY-MM');
/** A ZIP code: five digits, optionally a dash and four more. */
export const zipSchema = z.string().regex(/^\d{5}(-\d{4})?$/, 'Expected a ZIP code (NNNNN or NNNNN-NNNN)');
/** The 9-digit ZIP of `postal_address`: `NNNNN-NNNN`. */
export const zip9Schema = z.string().regex(/^\d{5}-\d{4}$/, 'Expected a 9-digit ZIP (NNNNN-NNNN)');

const nonNegativeInt = z.number().int().nonnegative();

// ---------------------------------------------------------------------------------------------------------
// Field names

/** The intelligence fields that hold one scalar value (every field but `interests`). */
export type ScalarIntelligenceField = Exclude<IntelligenceField, 'interests'>;

/** Other sections of a person's result, each enabled separately for a key. */
export const RESULT_SECTIONS = ['eam', 'postal_address'] as const;
export type ResultSection = (typeof RESULT_SECTIONS)[number];

/** The misspelling of `financial_segment` in the spec's sample response; readers rename it. */
export const FINANCIAL_SEGMENT_MISSPELLING = 'financial_segement';

// ---------------------------------------------------------------------------------------------------------
// Strict schemas

/** One strict value schema per scalar intelligence field: enumerations and formats of the spec's tables. */
export const INTELLIGENCE_FIELD_SCHEMAS = {
  age: z.enum(AGE_RANGES),
  gender: z.enum(GENDERS),
  zip: zipSchema,
  household_income: z.enum(HOUSEHOLD_INCOMES),
  net_worth: z.enum(NET_WORTHS),
  home_market_value: z.enum(HOME_MARKET_VALUES),
  home_owner_status: z.enum(HOME_OWNER_STATUSES),
  length_of_residence: z.enum(LENGTHS_OF_RESIDENCE),
  marital_status: z.enum(MARITAL_STATUSES),
  presence_of_children: z.enum(PRESENCE_OF_CHILDREN),
  education: z.enum(EDUCATIONS),
  occupation: z.enum(OCCUPATIONS),
  rfm_offline_avg_days: nonNegativeInt,
  rfm_online_avg_days: nonNegativeInt,
  rfm_avg_dollars: nonNegativeInt,
  rfm_last_order: isoDateSchema,
  life_stage_segment: z.enum(LIFE_STAGE_SEGMENTS),
  life_stage_group: z.enum(LIFE_STAGE_GROUPS),
  financial_segment: z.enum(FINANCIAL_SEGMENTS),
  financial_group: z.enum(FINANCIAL_GROUPS),
} as const satisfies Record<ScalarIntelligenceField, z.ZodType>;

/** The enumeration of each enumerated field, for checking imported reference data and building pickers. */
export const INTELLIGENCE_ENUMERATIONS = {
  age: AGE_RANGES,
  gender: GENDERS,
  household_income: HOUSEHOLD_INCOMES,
  net_worth: NET_WORTHS,
  home_market_value: HOME_MARKET_VALUES,
  home_owner_status: HOME_OWNER_STATUSES,
  length_of_residence: LENGTHS_OF_RESIDENCE,
  marital_status: MARITAL_STATUSES,
  presence_of_children: PRESENCE_OF_CHILDREN,
  education: EDUCATIONS,
  occupation: OCCUPATIONS,
  life_stage_segment: LIFE_STAGE_SEGMENTS,
  life_stage_group: LIFE_STAGE_GROUPS,
  financial_segment: FINANCIAL_SEGMENTS,
  financial_group: FINANCIAL_GROUPS,
} as const satisfies Partial<Record<ScalarIntelligenceField, readonly string[]>>;

const interestShape = <T extends z.ZodType>(value: T) =>
  Object.fromEntries(INTEREST_NAMES.map((name) => [name, value.optional()])) as {
    [K in InterestName]: z.ZodOptional<T>;
  };

/** `interests`: a member is present, `true`, when the behaviour was seen, and absent otherwise. */
export const interestsSchema = z.strictObject(interestShape(z.literal(true)));
export type Interests = z.infer<typeof interestsSchema>;

/** `eam` longevity: 0 never encountered, 1 within the last month, 2 within the last year, 3 over a year ago. */
export const EAM_LONGEVITY_MAX = 3;
/** `eam` velocity and popularity: 0 to 10. */
export const EAM_SCORE_MAX = 10;

export const eamSchema = z.object({
  date_first_seen: z.union([isoDateSchema, z.literal('now')]),
  longevity: z.number().int().min(0).max(EAM_LONGEVITY_MAX),
  velocity: z.number().int().min(0).max(EAM_SCORE_MAX),
  popularity: z.number().int().min(0).max(EAM_SCORE_MAX),
  month_last_open: isoMonthSchema.optional(),
});
export type Eam = z.infer<typeof eamSchema>;

/** The `eam` object of an address unknown to the provider (spec: "Email activity metrics result"). */
export const EAM_UNKNOWN_ADDRESS: Eam = { date_first_seen: 'now', longevity: 0, velocity: 0, popularity: 0 };

export const postalAddressSchema = z.object({
  first_name: z.string(),
  last_name: z.string(),
  address: z.string(),
  city: z.string(),
  state: z.string(),
  zip: zip9Schema,
});
export type PostalAddress = z.infer<typeof postalAddressSchema>;

/** One element of `alternate_email` or `email_append`. */
export const emailMatchSchema = z.object({
  email: z.string(),
  email_match_type: z.enum(EMAIL_MATCH_TYPES),
});
export type EmailMatch = z.infer<typeof emailMatchSchema>;

const strictFieldShape = Object.fromEntries(
  Object.entries(INTELLIGENCE_FIELD_SCHEMAS).map(([name, schema]) => [name, schema.optional()]),
) as { [K in ScalarIntelligenceField]: z.ZodOptional<(typeof INTELLIGENCE_FIELD_SCHEMAS)[K]> };

/**
 * A person's result as our service produces it: only enabled fields that matched appear, `{}` when nothing
 * matched. Strict about values; unknown members are stripped.
 */
export const intelligenceResultSchema = z.object({
  ...strictFieldShape,
  interests: interestsSchema.optional(),
  eam: eamSchema.optional(),
  postal_address: postalAddressSchema.optional(),
});
export type IntelligenceResult = z.infer<typeof intelligenceResultSchema>;

// ---------------------------------------------------------------------------------------------------------
// Tolerant schemas (what a client reads)

/** Renames `financial_segement` to `financial_segment` (the correct name wins when both are present). */
export function normaliseFieldNames(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  if (!(FINANCIAL_SEGMENT_MISSPELLING in value)) return value;
  const { [FINANCIAL_SEGMENT_MISSPELLING]: misspelt, ...rest } = value as Record<string, unknown>;
  return 'financial_segment' in rest ? rest : { ...rest, financial_segment: misspelt };
}

export const eamResponseSchema = z.looseObject({
  date_first_seen: z.string(),
  longevity: z.number(),
  velocity: z.number(),
  popularity: z.number(),
  month_last_open: z.string().optional(),
});
export type EamResponse = z.infer<typeof eamResponseSchema>;

/** `postal_address` as read: members optional, since the spec's "no match" (`{}`) may come nested. */
export const postalAddressResponseSchema = z.looseObject({
  first_name: z.string().optional(),
  last_name: z.string().optional(),
  address: z.string().optional(),
  city: z.string().optional(),
  state: z.string().optional(),
  zip: z.string().optional(),
});
export type PostalAddressResponse = z.infer<typeof postalAddressResponseSchema>;

export const emailMatchResponseSchema = z.looseObject({
  email: z.string(),
  email_match_type: z.string(),
});
export type EmailMatchResponse = z.infer<typeof emailMatchResponseSchema>;

const text = z.string().optional();
const count = z.number().optional();

export const intelligenceResponseSchema = z.preprocess(
  normaliseFieldNames,
  z.looseObject({
    age: text,
    gender: text,
    zip: text,
    household_income: text,
    net_worth: text,
    home_market_value: text,
    home_owner_status: text,
    length_of_residence: text,
    marital_status: text,
    presence_of_children: text,
    education: text,
    occupation: text,
    rfm_offline_avg_days: count,
    rfm_online_avg_days: count,
    rfm_avg_dollars: count,
    rfm_last_order: text,
    life_stage_segment: text,
    life_stage_group: text,
    financial_segment: text,
    financial_group: text,
    // Unknown interests (the data dictionary names movie and music interests) are kept.
    interests: z.looseObject(interestShape(z.boolean())).optional(),
    eam: eamResponseSchema.optional(),
    postal_address: postalAddressResponseSchema.optional(),
  }),
);
/** A person's result as a client reads it (E5, an E6 element): tolerant, unknown members kept. */
export type IntelligenceResponse = z.infer<typeof intelligenceResponseSchema>;
