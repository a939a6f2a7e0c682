/**
 * Just enough US geography for a believable simulator: a representative city, ZIP code and
 * coordinate per supported state (to fill in what a session request leaves out), ZIP-prefix ranges
 * (to find the state of a bare ZIP), state FIPS codes (for the coverage endpoint) and a small set of
 * census counties, tracts and blocks that the simulated providers cover.
 */
import { US_STATES, type UsState } from '../api/schemas.js';

export interface StateInfo {
  postal: UsState;
  fips: string;
  city: string;
  zip: string;
  latitude: number;
  longitude: number;
}

// postal, FIPS, representative city, ZIP, latitude, longitude.
const STATE_ROWS: Array<[UsState, string, string, string, number, number]> = [
  ['AL', '01', 'Birmingham', '35203', 33.52, -86.81],
  ['AK', '02', 'Anchorage', '99501', 61.22, -149.9],
  ['AZ', '04', 'Phoenix', '85004', 33.45, -112.07],
  ['AR', '05', 'Little Rock', '72201', 34.75, -92.29],
  ['CA', '06', 'Los Angeles', '90012', 34.05, -118.24],
  ['CO', '08', 'Denver', '80202', 39.75, -104.99],
  ['CT', '09', 'Hartford', '06103', 41.77, -72.67],
  ['DE', '10', 'Wilmington', '19801', 39.74, -75.55],
  ['FL', '12', 'Miami', '33130', 25.77, -80.2],
  ['GA', '13', 'Atlanta', '30303', 33.75, -84.39],
  ['HI', '15', 'Honolulu', '96813', 21.31, -157.86],
  ['ID', '16', 'Boise', '83702', 43.62, -116.2],
  ['IL', '17', 'Chicago', '60601', 41.88, -87.62],
  ['IN', '18', 'Indianapolis', '46204', 39.77, -86.16],
  ['IA', '19', 'Des Moines', '50309', 41.59, -93.62],
  ['KS', '20', 'Wichita', '67202', 37.69, -97.34],
  ['KY', '21', 'Louisville', '40202', 38.25, -85.76],
  ['LA', '22', 'New Orleans', '70112', 29.95, -90.07],
  ['ME', '23', 'Portland', '04101', 43.66, -70.26],
  ['MD', '24', 'Baltimore', '21202', 39.29, -76.61],
  ['MA', '25', 'Boston', '02108', 42.36, -71.06],
  ['MI', '26', 'Detroit', '48226', 42.33, -83.05],
  ['MN', '27', 'Minneapolis', '55401', 44.98, -93.27],
  ['MS', '28', 'Jackson', '39201', 32.3, -90.18],
  ['MO', '29', 'Kansas City', '64106', 39.1, -94.58],
  ['MT', '30', 'Billings', '59101', 45.78, -108.5],
  ['NE', '31', 'Omaha', '68102', 41.26, -95.94],
  ['NV', '32', 'Las Vegas', '89101', 36.17, -115.14],
  ['NH', '33', 'Manchester', '03101', 42.99, -71.46],
  ['NJ', '34', 'Newark', '07102', 40.74, -74.17],
  ['NM', '35', 'Albuquerque', '87102', 35.08, -106.65],
  ['NY', '36', 'New York', '10001', 40.75, -73.99],
  ['NC', '37', 'Charlotte', '28202', 35.23, -80.84],
  ['ND', '38', 'Fargo', '58102', 46.88, -96.79],
  ['OH', '39', 'Columbus', '43215', 39.96, -83.0],
  ['OK', '40', 'Oklahoma City', '73102', 35.47, -97.52],
  ['OR', '41', 'Portland', '97204', 45.52, -122.68],
  ['PA', '42', 'Philadelphia', '19103', 39.95, -75.17],
  ['PR', '72', 'San Juan', '00901', 18.47, -66.11],
  ['RI', '44', 'Providence', '02903', 41.82, -71.41],
  ['SC', '45', 'Columbia', '29201', 34.0, -81.03],
  ['SD', '46', 'Sioux Falls', '57104', 43.55, -96.73],
  ['TN', '47', 'Nashville', '37203', 36.16, -86.78],
  ['TX', '48', 'Austin', '78701', 30.27, -97.74],
  ['UT', '49', 'Salt Lake City', '84111', 40.76, -111.89],
  ['VT', '50', 'Burlington', '05401', 44.48, -73.21],
  ['VA', '51', 'Richmond', '23219', 37.54, -77.44],
  ['WA', '53', 'Seattle', '98101', 47.61, -122.33],
  ['WV', '54', 'Charleston', '25301', 38.35, -81.63],
  ['WI', '55', 'Milwaukee', '53202', 43.04, -87.91],
  ['WY', '56', 'Cheyenne', '82001', 41.14, -104.82],
];

const STATES = new Map<string, StateInfo>(
  STATE_ROWS.map(([postal, fips, city, zip, latitude, longitude]) => [
    postal,
    { postal, fips, city, zip, latitude, longitude },
  ]),
);

// Keep the table honest: one row per supported state, no more, no less.
if (STATES.size !== US_STATES.length || !US_STATES.every((s) => STATES.has(s))) {
  throw new Error('geography table does not cover exactly the supported states');
}

const FIPS_TO_POSTAL = new Map(STATE_ROWS.map(([postal, fips]) => [fips, postal]));

/** The table row of a supported state. */
export function stateInfo(postal: UsState): StateInfo {
  const info = STATES.get(postal);
  if (!info) throw new Error(`unsupported state ${postal}`);
  return info;
}

// First three ZIP digits where each state's range starts (USPS ZIP-prefix allocation, coarse).
// A prefix between two starts belongs to the lower one; unassigned prefixes fall to a neighbour,
// which is good enough to fill in a missing state.
// prettier-ignore
const ZIP3_STARTS: Array<[number, UsState]> = [
  [6, 'PR'], [10, 'MA'], [28, 'RI'], [30, 'NH'], [39, 'ME'], [50, 'VT'], [60, 'CT'], [70, 'NJ'],
  [100, 'NY'], [150, 'PA'], [197, 'DE'], [200, 'MD'], [220, 'VA'], [247, 'WV'], [270, 'NC'],
  [290, 'SC'], [300, 'GA'], [320, 'FL'], [350, 'AL'], [370, 'TN'], [386, 'MS'], [398, 'GA'],
  [400, 'KY'], [430, 'OH'], [460, 'IN'], [480, 'MI'], [500, 'IA'], [530, 'WI'], [550, 'MN'],
  [570, 'SD'], [580, 'ND'], [590, 'MT'], [600, 'IL'], [630, 'MO'], [660, 'KS'], [680, 'NE'],
  [700, 'LA'], [716, 'AR'], [730, 'OK'], [750, 'TX'], [800, 'CO'], [820, 'WY'], [832, 'ID'],
  [840, 'UT'], [850, 'AZ'], [870, 'NM'], [885, 'TX'], [889, 'NV'], [900, 'CA'], [967, 'HI'],
  [970, 'OR'], [980, 'WA'], [995, 'AK'],
];

/** The state a ZIP code belongs to (coarse, by prefix). */
export function stateForZip(zip: string): UsState {
  const prefix = Number(zip.slice(0, 3));
  let state: UsState = 'PR';
  for (const [start, postal] of ZIP3_STARTS) {
    if (prefix >= start) state = postal;
    else break;
  }
  return state;
}

/** Postal abbreviation for a `states[]` coverage value given as postal code or FIPS code. */
export function postalForStateParam(value: string): UsState | null {
  if (/^\d{2}$/.test(value)) return FIPS_TO_POSTAL.get(value) ?? null;
  return STATES.has(value) ? (value as UsState) : null;
}

/** State FIPS code of a supported postal abbreviation. */
export function fipsForPostal(postal: UsState): string {
  return stateInfo(postal).fips;
}

/** A census county the simulated providers cover, with its tracts and blocks. */
export interface CoverageCounty {
  fips: string; // 5 digits: state + county
  name: string;
  tracts: string[]; // 11 digits
  blocks: string[]; // 15 digits
}

const COUNTY_ROWS: Array<[string, string]> = [
  ['08031', 'Denver County, CO'],
  ['08005', 'Arapahoe County, CO'],
  ['08059', 'Jefferson County, CO'],
  ['36061', 'New York County, NY'],
  ['36047', 'Kings County, NY'],
  ['17031', 'Cook County, IL'],
  ['06037', 'Los Angeles County, CA'],
  ['06075', 'San Francisco County, CA'],
  ['48453', 'Travis County, TX'],
  ['48201', 'Harris County, TX'],
  ['53033', 'King County, WA'],
  ['12086', 'Miami-Dade County, FL'],
  ['13121', 'Fulton County, GA'],
  ['42101', 'Philadelphia County, PA'],
];

// Three tracts per county and three blocks per tract, with fixed suffixes so documented examples
// (e.g. tract 08031001100, block 080310011001000) keep working.
const TRACT_SUFFIXES = ['001100', '002000', '003101'];
const BLOCK_SUFFIXES = ['1000', '1001', '2003'];

/** Every county (with tracts and blocks) known to the coverage endpoint. */
export const COVERAGE_COUNTIES: readonly CoverageCounty[] = COUNTY_ROWS.map(([fips, name]) => {
  const tracts = TRACT_SUFFIXES.map((s) => `${fips}${s}`);
  return {
    fips,
    name,
    tracts,
    blocks: tracts.flatMap((t) => BLOCK_SUFFIXES.map((b) => `${t}${b}`)),
  };
});
