// Bundled in place of better-sqlite3 (serverless.yml custom.esbuild.alias): the Lambda functions
// only reach PostgreSQL, and a native SQLite module built on the packaging machine would not
// load on arm64 Lambda anyway. Using SQLite there fails loudly instead of at import time.
'use strict';
module.exports = function BetterSqlite3Unavailable() {
  throw new Error(
    'SQLite is not available in the Lambda package: set DATABASE_URL to postgres://… (run SQLite stores with the CLI instead)',
  );
};
