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

/**
 * publishPrefix (issue 57 #12): the role's grant (`<prefix>/*`, infra/publish.yml) and the lifecycle
 * rule (`<prefix>/`) are built from it as written, and the function writes under it as
 * lib/publish/target.ts reads it (folder names separated by single slashes). A leading or trailing
 * slash, an empty or `.`/`..` segment, or an empty prefix would deploy a grant and a rule that never
 * match the keys written: every run access-denied, no dated copy ever expiring. Refused here.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
const PREFIX_SEGMENT = /^(?!\.{1,2}$)[^/\u0000-\u001f\u007f-\u009f]+$/;

function prefixProblem(prefix) {
  if (typeof prefix !== 'string' || prefix === '') return 'it is empty';
  if (prefix.startsWith('/') || prefix.endsWith('/')) return 'it starts or ends with a slash';
  if (!prefix.split('/').every((segment) => PREFIX_SEGMENT.test(segment)))
    return 'it has an empty, "." or ".." folder name, or a control character';
  return undefined;
}

/** A parameter's value: --param on the command line, else the stage's, else the default's. */
async function paramValue(name, stage, options, resolveConfigurationProperty) {
  const given = []
    .concat(options.param || [])
    .map(String)
    .reverse()
    .find((p) => p.split('=')[0] === name);
  if (given !== undefined) return given.slice(name.length + 1);
  for (const where of [stage, 'default']) {
    const value = await resolveConfigurationProperty(['params', where, name]).catch(() => undefined);
    if (value !== undefined && value !== null) return value;
  }
  return undefined;
}

function fail(message) {
  const error = new Error(message);
  error.stack = error.message; // osls prints the stack: the message alone is the whole story
  throw error;
}

module.exports = async ({ options, resolveConfigurationProperty }) => {
  const stage = options.stage || 'dev';
  const given = new Set([].concat(options.param || []).map((p) => String(p).split('=')[0]));
  const missing = [];
  for (const name of Object.keys(REQUIRED)) {
    if (given.has(name)) continue;
    const staged = await resolveConfigurationProperty(['params', stage, name]).catch(() => undefined);
    if (staged === undefined || staged === null || staged === '') missing.push(name);
  }
  if (missing.length > 0)
    fail(
      `missing required deployment parameter${missing.length > 1 ? 's' : ''} for stage "${stage}": ` +
        `${missing.map((name) => `${name} (${REQUIRED[name]})`).join('; ')}. See README "Configuration".`,
    );
  const prefix = await paramValue('publishPrefix', stage, options, resolveConfigurationProperty);
  const problem = prefixProblem(prefix);
  if (problem !== undefined)
    fail(
      `publishPrefix ${JSON.stringify(String(prefix ?? ''))} for stage "${stage}" cannot be used: ${problem}. ` +
        'Give folder names separated by single slashes, without a slash at either end (e.g. reports or ops/reports): ' +
        "the publish role's grant and the dated copies' lifecycle rule are built from it as written. See docs/publish.md.",
    );
  return 'ok';
};
