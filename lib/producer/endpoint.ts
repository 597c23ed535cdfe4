/**
 * Where a queue URL's messages go (R4-11, docs/producers.md "Which endpoint"). An AWS queue URL
 * (`https://sqs.<region>.amazonaws.com/<account>/<name>`, also `.amazonaws.com.cn` and the legacy
 * `<region>.queue.amazonaws.com`) is sent through the SDK's own endpoint resolution in that region
 * (AWS_ENDPOINT_URL_SQS, e.g. a VPC endpoint, still applies); its FIPS (`sqs-fips.<region>…`) and
 * dual-stack (`sqs.<region>.api.aws`) forms through the SDK's FIPS and dual-stack variants of that
 * region's endpoint, and a VPC endpoint's name (`vpce-….sqs.<region>.vpce.amazonaws.com`) as the
 * endpoint itself, signed for the region it names (issue 48: AWS refuses a us-east-1 signature
 * there, the default when AWS_REGION is unset). Any other host (LocalStack,
 * ElasticMQ, fauxqs, a proxy) is the endpoint itself: the URL's origin (a `localhost` name:
 * 127.0.0.1 and the URL's port), so a host testing locally needs no extra variable.
 */
export interface QueueEndpoint {
  /** the SDK's `endpoint`: the URL's origin for a non-AWS host, undefined for AWS */
  endpoint?: string;
  /** the region an AWS URL names; undefined for other hosts (then the environment's, or us-east-1) */
  region?: string;
  /** an AWS FIPS host: the SDK's FIPS endpoint of the region */
  useFipsEndpoint?: true;
  /** an AWS dual-stack host (`.api.aws`): the SDK's dual-stack endpoint of the region */
  useDualstackEndpoint?: true;
  /** host:port, for messages: never the URL's path, query or user info */
  label: string;
}

/** An AWS SQS host the SDK resolves from its region: standard, FIPS, dual-stack, both, China, legacy. */
const AWS_HOST =
  /^(?:sqs(?<fips>-fips)?\.(?<region>[a-z0-9-]+)\.(?:amazonaws\.com(?:\.cn)?|(?<dual>api\.aws))|(?<legacy>[a-z0-9-]+)\.queue\.amazonaws\.com(?:\.cn)?)$/;
/** An interface VPC endpoint's own DNS name (`vpce-<id>[-<zone>].sqs.<region>.vpce.amazonaws.com`): reached as it is. */
const VPC_ENDPOINT_HOST = /^vpce-[a-z0-9-]+\.sqs(?:-fips)?\.(?<region>[a-z0-9-]+)\.vpce\.amazonaws\.com(?:\.cn)?$/;

export function queueEndpoint(queueUrl: string, env: NodeJS.ProcessEnv = process.env): QueueEndpoint {
  let url: URL;
  try {
    url = new URL(queueUrl);
  } catch {
    // not a URL: the SDK will refuse it on the first send and the drop names no endpoint
    return { label: 'unknown (the queue URL is not a URL)' };
  }
  const port = url.port || (url.protocol === 'http:' ? '80' : '443');
  const aws = AWS_HOST.exec(url.hostname);
  if (aws?.groups) {
    const { fips, region, dual, legacy } = aws.groups;
    const override = env.AWS_ENDPOINT_URL_SQS || env.AWS_ENDPOINT_URL;
    return {
      region: region ?? legacy,
      ...(fips ? { useFipsEndpoint: true as const } : {}),
      ...(dual ? { useDualstackEndpoint: true as const } : {}),
      label: override ? hostPort(override) : `${url.hostname}:${port}`,
    };
  }
  const vpce = VPC_ENDPOINT_HOST.exec(url.hostname);
  if (vpce?.groups) return { endpoint: url.origin, region: vpce.groups.region, label: `${url.hostname}:${port}` };
  // RFC 6761: `localhost` and every `*.localhost` name are this machine, but the system resolver
  // may not know the subdomains (fauxqs's queue URLs are `http://sqs.<region>.localhost:<port>/…`)
  // and may answer `localhost` with ::1 where the emulator listens on IPv4 only.
  const loopback = url.hostname === 'localhost' || url.hostname.endsWith('.localhost');
  return {
    endpoint: loopback ? `${url.protocol}//127.0.0.1:${port}` : url.origin,
    label: `${url.hostname}:${port}`,
  };
}

function hostPort(endpoint: string): string {
  try {
    const url = new URL(endpoint);
    return `${url.hostname}:${url.port || (url.protocol === 'http:' ? '80' : '443')}`;
  } catch {
    return 'unknown (AWS_ENDPOINT_URL_SQS is not a URL)';
  }
}
