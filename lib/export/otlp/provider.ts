/*
 * `gen_ai.provider.name` from the model a row names (docs/otlp.md#provider, R4-9): the GenAI
 * semantic conventions' registered values only (anthropic, openai, gcp.gemini, …, as
 * @opentelemetry/semantic-conventions 1.45 lists them), and only where the model's name says
 * which provider made it. A name this table does not know gives no attribute: omitted rather than
 * guessed. The rows carry no agent kind (claude-code, codex, …), and subagent_type is the host's
 * role name (`explore`), which names no provider, so the model is the only source.
 */

/** A `provider/model` prefix (OpenCode's and LiteLLM's form) → the registered value. */
const BY_PREFIX: ReadonlyMap<string, string> = new Map([
  ['anthropic', 'anthropic'],
  ['openai', 'openai'],
  ['google', 'gcp.gemini'],
  ['gemini', 'gcp.gemini'],
  ['google-vertex', 'gcp.vertex_ai'],
  ['vertex_ai', 'gcp.vertex_ai'],
  ['amazon-bedrock', 'aws.bedrock'],
  ['bedrock', 'aws.bedrock'],
  ['azure', 'azure.ai.openai'],
  ['mistral', 'mistral_ai'],
  ['xai', 'x_ai'],
  ['deepseek', 'deepseek'],
  ['groq', 'groq'],
  ['cohere', 'cohere'],
  ['perplexity', 'perplexity'],
]);

/** A bare model name's family (lower-cased, matched at its start) → the registered value. */
const BY_MODEL: readonly (readonly [RegExp, string])[] = [
  [/^claude(-|$)/, 'anthropic'],
  [/^(gpt-|chatgpt-|codex-|o[1-9](-|$))/, 'openai'],
  [/^gemini(-|$)/, 'gcp.gemini'],
  [/^(mistral|codestral|devstral|magistral|ministral|pixtral)(-|$)/, 'mistral_ai'],
  [/^grok(-|$)/, 'x_ai'],
  [/^deepseek(-|$)/, 'deepseek'],
  [/^command(-|$)/, 'cohere'],
  [/^sonar(-|$)/, 'perplexity'],
];

export function providerOf(model: string | null): string | undefined {
  if (model === null) return undefined;
  const name = model.trim().toLowerCase();
  const slash = name.indexOf('/');
  if (slash > 0) {
    const prefixed = BY_PREFIX.get(name.slice(0, slash));
    if (prefixed !== undefined) return prefixed;
    // a gateway's prefix (openrouter/…) says nothing of who serves it: omitted
    return undefined;
  }
  return BY_MODEL.find(([pattern]) => pattern.test(name))?.[1];
}
