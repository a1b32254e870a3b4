// The names of the intelligence fields and interests, without zod: the renderer imports these, and
// shared/api/intelligence.ts re-exports them.

/** The 22 members of the `interests` object. */
export const INTEREST_NAMES = [
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
export type InterestName = (typeof INTEREST_NAMES)[number];

/** The intelligence fields of the spec's tables, in table order (`interests` is one object field). */
export const INTELLIGENCE_FIELDS = [
  'age',
  'gender',
  'zip',
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
export type IntelligenceField = (typeof INTELLIGENCE_FIELDS)[number];
