// Deploy-time check (serverless.yml `custom.requiredParams`): every required deployment parameter
// that the stage lacks, named at once, with how to pass it, before anything is packaged. Without
// it osls stops at the first variable that refers to one ("Cannot resolve variable at
// params.default.redriveRoleArn"), which never names producerRoleArn. CommonJS: osls require()s it.
'use strict';

/** name → what it is and how to pass it (README "Configuration") */
const REQUIRED = {
  producerRoleArn:
    'the only principal allowed to send frames; pass --param="producerRoleArn=arn:aws:iam::<account>:role/<host-role>"',
};

module.exports = async ({ options, resolveConfigurationProperty }) => {
  const stage = options.stage || 'dev';
  const given = new Set([].concat(options.param || []).map((p) => String(p).split('=')[0]));
  const missing = [];
  for (const name of Object.keys(REQUIRED)) {
    if (given.has(name)) continue;
    const staged = await resolveConfigurationProperty(['params', stage, name]).catch(() => undefined);
    if (staged === undefined || staged === null || staged === '') missing.push(name);
  }
  if (missing.length === 0) return 'ok';
  const error = new Error(
    `missing required deployment parameter${missing.length > 1 ? 's' : ''} for stage "${stage}": ` +
      `${missing.map((name) => `${name} (${REQUIRED[name]})`).join('; ')}. See README "Configuration".`,
  );
  error.stack = error.message; // osls prints the stack: the message alone is the whole story
  throw error;
};
