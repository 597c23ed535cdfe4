/**
 * Words every renderer (table, CSV, page) shows for the same thing, so a person reads one label for
 * one meaning (issue 34): a group whose key the host never reported (NULL) is "(not reported)",
 * distinct from a key the host stored as '' ("(empty)"), which is a value, not a missing one.
 */
export const NOT_REPORTED_LABEL = '(not reported)';
export const EMPTY_KEY_LABEL = '(empty)';
