// The ids of Projects, Sessions, change requests and users: one pattern for every reader.

/** A UUID in any case (what a person may type). */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A UUID as svc writes it (lower case): inside tokens and ref names, nothing else matches. */
export const LOWER_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
