/** English month names, January first (index = month - 1): dates in views, questions and dataset files. */
export const MONTH_NAMES: readonly string[] = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/** English weekday names, Sunday first (index = Date.getUTCDay()). */
export const WEEKDAY_NAMES: readonly string[] = [
  'Sunday',
  'Monday',
  'Tuesday',
  'Wednesday',
  'Thursday',
  'Friday',
  'Saturday',
];

/** The same names in lower case, for matching lower-cased text. */
export const MONTH_NAMES_LOWER: readonly string[] = MONTH_NAMES.map((name) => name.toLowerCase());
export const WEEKDAY_NAMES_LOWER: readonly string[] = WEEKDAY_NAMES.map((name) => name.toLowerCase());
