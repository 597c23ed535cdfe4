// Bundled in place of `ws` (serverless.yml custom.esbuild.alias): Lambda's nodejs22.x has a global
// WebSocket, which lib/db/neon.ts hands to the Neon driver; `ws` (48 KiB) is for local Node 20 only.
// A runtime without the global fails loudly at the first connection instead of at import time.
'use strict';
module.exports = function WsUnavailable() {
  throw new Error(
    'no WebSocket: this bundle expects the global WebSocket of Node.js 22 (serverless.yml runtime nodejs22.x); ws is not bundled',
  );
};
