import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../lib/db/open.js';
import { PUBLISH_RETENTION_DAYS, PUBLISH_SCHEDULE, PUBLISH_TIMEOUT_SECONDS } from '../../lib/defaults.js';
import { DATED_TAG } from '../../lib/publish/run.js';
import { createHostSchema } from '../../local/host-schema.js';
import { startEmbeddedPostgres } from '../../local/pglite-server.js';

// Packages the service exactly as CI does (`npm run package` = osls package --stage ci), offline
// and without AWS credentials, and asserts the generated CloudFormation's key settings.
type Resource = { Type: string; Properties: Record<string, any>; Condition?: string };
type Template = { Resources: Record<string, Resource>; Outputs?: Record<string, unknown> };

const PRODUCER = 'arn:aws:iam::000000000000:role/ci-package-only-producer';
let outDir: string;
let template: Template;
let templateText: string;

beforeAll(async () => {
  outDir = mkdtempSync(join(tmpdir(), 'subagent-context-package-'));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    SLS_TELEMETRY_DISABLED: '1',
    SLS_NOTIFICATIONS_MODE: 'off',
  };
  await run(
    process.execPath,
    ['node_modules/osls/bin/serverless.js', 'package', '--stage', 'ci', '--package', outDir],
    {
      cwd: process.cwd(),
      env,
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  templateText = readFileSync(join(outDir, 'cloudformation-template-update-stack.json'), 'utf8');
  template = JSON.parse(templateText) as Template;
}, 240_000);
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

const run = promisify(execFile);

const resource = (logicalId: string): Resource => {
  const found = template.Resources[logicalId];
  if (!found) throw new Error(`no resource ${logicalId}; have ${Object.keys(template.Resources).join(', ')}`);
  return found;
};
const ofType = (type: string) => Object.entries(template.Resources).filter(([, r]) => r.Type === type);
const policyStatements = (roleId: string): Array<Record<string, any>> =>
  resource(roleId).Properties.Policies.flatMap((p: any) => p.PolicyDocument.Statement);
const actionsOf = (roleId: string): string[] => policyStatements(roleId).flatMap((s) => [s.Action].flat());

describe('the packaged CloudFormation template', () => {
  it.each(['Ingest', 'Health', 'Migrate', 'Export', 'Publish'])(
    'runs %s on nodejs22.x arm64 with its own role',
    (name) => {
      const fn = resource(`${name}LambdaFunction`).Properties;
      expect(fn.Runtime).toBe('nodejs22.x');
      expect(fn.Architectures).toEqual(['arm64']);
      expect(fn.Role).toEqual({ 'Fn::GetAtt': [`${name}Role`, 'Arn'] });
    },
  );

  it('has no shared default execution role', () => {
    expect(template.Resources.IamRoleLambdaExecution).toBeUndefined();
  });

  it('feeds ingest from the FIFO queue in batches of 10 with partial batch failures and a concurrency cap', () => {
    const mappings = ofType('AWS::Lambda::EventSourceMapping');
    expect(mappings).toHaveLength(1);
    const props = mappings[0]![1].Properties;
    expect(props.EventSourceArn).toEqual({ 'Fn::GetAtt': ['FramesQueue', 'Arn'] });
    expect(props.FunctionName).toEqual({ 'Fn::GetAtt': ['IngestLambdaFunction', 'Arn'] });
    expect(props.BatchSize).toBe(10);
    expect(props.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    expect(props.ScalingConfig.MaximumConcurrency).toBeGreaterThanOrEqual(2);
  });

  it('makes the queue and its dead-letter queue FIFO, with redrive and a visibility timeout ≥ 6× the ingest timeout', () => {
    const queue = resource('FramesQueue').Properties;
    const dlq = resource('FramesDeadLetterQueue').Properties;
    expect(queue.FifoQueue).toBe(true);
    expect(dlq.FifoQueue).toBe(true);
    expect(queue.QueueName).toMatch(/\.fifo$/);
    expect(dlq.QueueName).toMatch(/\.fifo$/);
    expect(queue.RedrivePolicy.deadLetterTargetArn).toEqual({ 'Fn::GetAtt': ['FramesDeadLetterQueue', 'Arn'] });
    expect(queue.RedrivePolicy.maxReceiveCount).toBeGreaterThanOrEqual(1);
    expect(queue.VisibilityTimeout).toBeGreaterThanOrEqual(6 * resource('IngestLambdaFunction').Properties.Timeout);
  });

  it('lets only the producer role (and the redrive role) send to the queue', () => {
    const statements = resource('FramesQueuePolicy').Properties.PolicyDocument.Statement as Array<Record<string, any>>;
    const allow = statements.filter((s) => s.Effect === 'Allow');
    expect(allow).toHaveLength(1);
    expect(allow[0]!.Principal).toEqual({ AWS: PRODUCER });
    const deny = statements.find((s) => s.Effect === 'Deny' && s.Action === 'sqs:SendMessage');
    expect(deny?.Principal).toBe('*');
    expect(deny?.Condition.ArnNotEquals['aws:PrincipalArn']).toContain(PRODUCER);
  });

  it('runs health on a schedule and migrate with no event and a 15-minute timeout', () => {
    const rules = ofType('AWS::Events::Rule').filter(
      ([, r]) => !/Export|Publish/.test(JSON.stringify(r.Properties.Targets)),
    );
    expect(rules).toHaveLength(2);
    const [check, audit] = ['rate(5 minutes)', 'cron(30 3 * * ? *)'].map(
      (rate) => rules.find(([, r]) => r.Properties.ScheduleExpression === rate)![1].Properties,
    ) as [any, any];
    expect(JSON.stringify(check.Targets)).toContain('HealthLambdaFunction');
    expect(check.State).not.toBe('DISABLED');
    // The full audit: daily, on by default (every message audited at least once), and it tells the handler which kind it is.
    expect(audit.State).not.toBe('DISABLED');
    expect(JSON.parse(audit.Targets[0].Input)).toEqual({ kind: 'full' });
    expect(resource('MigrateLambdaFunction').Properties.Timeout).toBe(900);
    expect(templateText).not.toMatch(/Migrate[A-Za-z]*(EventSourceMapping|EventsRule|Permission)/);
  });

  it.each([
    ['HealthShortfallAlarm', 'shortfall', 'notBreaching'],
    ['HealthNotActivatedAlarm', 'not_activated', 'notBreaching'],
    ['HealthCheckMissingAlarm', 'health_check_ok', 'breaching'],
    ['AuditMissingAlarm', 'audit_health_check_ok', 'breaching'],
    ['HealthCheckpointLagAlarm', 'checkpoint_lag_seconds', 'notBreaching'],
    ['DeadLetterQueueNotEmptyAlarm', 'ApproximateNumberOfMessagesVisible', 'notBreaching'],
    ['OldestMessageAgeAlarm', 'ApproximateAgeOfOldestMessage', 'notBreaching'],
    ['IngestErrorsAlarm', 'Errors', 'notBreaching'],
  ])('alarms %s on %s (missing data: %s) to the SNS topic', (id, metric, missing) => {
    const alarm = resource(id).Properties;
    expect(alarm.MetricName).toBe(metric);
    expect(alarm.TreatMissingData).toBe(missing);
    expect(alarm.AlarmActions).toEqual([{ Ref: 'AlarmTopic' }]);
    expect(resource('AlarmTopic').Type).toBe('AWS::SNS::Topic');
  });

  it('issue 26: the daily audit alarms on unacknowledged and history shortfalls together, over a day', () => {
    const alarm = resource('AuditShortfallAlarm').Properties;
    const stat = (name: string) => alarm.Metrics.find((m: any) => m.MetricStat?.Metric.MetricName === name)?.MetricStat;
    expect(stat('audit_unacknowledged_shortfall')).toMatchObject({ Period: 86400, Stat: 'Maximum' });
    expect(stat('audit_history_shortfall')).toMatchObject({ Period: 86400, Stat: 'Maximum' });
    expect(alarm.Metrics.find((m: any) => m.ReturnData).Expression).toBe('FILL(live, 0) + FILL(history, 0)');
    expect(alarm).toMatchObject({
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'notBreaching',
    });
    expect(alarm.AlarmActions).toEqual([{ Ref: 'AlarmTopic' }]);
  });

  it('alarms deliver: the topic is encrypted with a rotated customer managed key that CloudWatch (this account, these alarms) may use', () => {
    expect(resource('AlarmTopic').Properties.KmsMasterKeyId).toEqual({ Ref: 'AlarmTopicKey' });
    const key = resource('AlarmTopicKey').Properties;
    expect(key.EnableKeyRotation).toBe(true);
    const forCloudWatch = key.KeyPolicy.Statement.find((s: any) => s.Principal?.Service === 'cloudwatch.amazonaws.com');
    expect(forCloudWatch.Effect).toBe('Allow');
    expect(forCloudWatch.Action).toEqual(['kms:Decrypt', 'kms:GenerateDataKey*']);
    expect(forCloudWatch.Condition.StringEquals['aws:SourceAccount']).toEqual({ Ref: 'AWS::AccountId' });
    expect(JSON.stringify(forCloudWatch.Condition.ArnLike['aws:SourceArn'])).toMatch(
      /:cloudwatch:\$\{AWS::Region\}:\$\{AWS::AccountId\}:alarm:subagent-context-ci-\*/,
    );
    // the account keeps control of its key
    expect(
      key.KeyPolicy.Statement.some((s: any) => s.Action === 'kms:*' && JSON.stringify(s.Principal).includes(':root')),
    ).toBe(true);
  });

  it("alarms deliver: the topic policy lets only this account's alarms publish, and only over TLS", () => {
    const policy = resource('AlarmTopicPolicy').Properties;
    expect(policy.Topics).toEqual([{ Ref: 'AlarmTopic' }]);
    const [allow, deny] = policy.PolicyDocument.Statement;
    expect(allow).toMatchObject({
      Effect: 'Allow',
      Principal: { Service: 'cloudwatch.amazonaws.com' },
      Action: 'sns:Publish',
      Resource: { Ref: 'AlarmTopic' },
    });
    expect(allow.Condition.StringEquals['aws:SourceAccount']).toEqual({ Ref: 'AWS::AccountId' });
    expect(JSON.stringify(allow.Condition.ArnLike['aws:SourceArn'])).toMatch(/:alarm:subagent-context-ci-\*/);
    expect(deny).toMatchObject({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } });
  });

  it('every alarm is named under the prefix the key and topic policies allow', () => {
    for (const [, alarm] of ofType('AWS::CloudWatch::Alarm'))
      expect(alarm.Properties.AlarmName).toMatch(/^subagent-context-ci-/);
  });

  it.each([
    ['FramesQueuePolicy', 'FramesQueue'],
    ['FramesDeadLetterQueuePolicy', 'FramesDeadLetterQueue'],
  ])('%s denies every non-TLS request to %s', (policyId, queueId) => {
    const statements = resource(policyId).Properties.PolicyDocument.Statement as Array<Record<string, any>>;
    expect(statements).toContainEqual({
      Sid: 'TlsOnly',
      Effect: 'Deny',
      Principal: '*',
      Action: 'sqs:*',
      Resource: { 'Fn::GetAtt': [queueId, 'Arn'] },
      Condition: { Bool: { 'aws:SecureTransport': 'false' } },
    });
  });

  it('R2-4: alarms on records kept on the queue by a system error (the system_error metric)', () => {
    const alarm = resource('IngestSystemErrorsAlarm').Properties;
    expect(alarm).toMatchObject({
      MetricName: 'system_error',
      Statistic: 'Sum',
      Threshold: 0,
      TreatMissingData: 'notBreaching',
    });
    expect(alarm.AlarmActions).toEqual([{ Ref: 'AlarmTopic' }]);
  });

  it('watches the dead-letter queue and the main queue by name', () => {
    expect(resource('DeadLetterQueueNotEmptyAlarm').Properties.Dimensions).toEqual([
      { Name: 'QueueName', Value: { 'Fn::GetAtt': ['FramesDeadLetterQueue', 'QueueName'] } },
    ]);
    expect(resource('OldestMessageAgeAlarm').Properties.Dimensions).toEqual([
      { Name: 'QueueName', Value: { 'Fn::GetAtt': ['FramesQueue', 'QueueName'] } },
    ]);
  });

  it('holds no database secret: only the SSM parameter name reaches the functions', () => {
    expect(templateText).not.toMatch(/postgres(ql)?:\/\//);
    expect(templateText).not.toContain('{{resolve:');
    for (const name of ['Ingest', 'Health', 'Migrate', 'Export', 'Publish']) {
      const variables = resource(`${name}LambdaFunction`).Properties.Environment.Variables;
      expect(variables.DATABASE_URL).toBeUndefined();
      expect(variables.DATABASE_URL_SSM_PARAMETER).toBe('/subagent-context/ci/database-url');
    }
  });

  it.each(['IngestRole', 'HealthRole', 'MigrateRole', 'ExportRole', 'PublishRole'])(
    'grants %s read of exactly that parameter and nothing wildcarded',
    (roleId) => {
      const statements = policyStatements(roleId);
      const ssm = statements.find((s) => s.Sid === 'ReadDatabaseUrl');
      expect(ssm?.Resource['Fn::Sub']).toMatch(/:parameter\/subagent-context\/ci\/database-url$/);
      const kms = statements.find((s) => s.Sid === 'DecryptDatabaseUrl');
      expect(kms?.Condition.StringEquals['kms:ViaService']).toBeDefined();
      expect(kms?.Condition.StringEquals['kms:EncryptionContext:PARAMETER_ARN']).toEqual(ssm?.Resource);
      for (const statement of statements) {
        expect([statement.Action].flat().every((a: string) => !a.includes('*'))).toBe(true);
        if (statement.Action !== 'kms:Decrypt') expect(statement.Resource).not.toBe('*');
        else expect(statement.Condition.StringEquals['kms:ViaService']).toBeDefined();
      }
    },
  );

  it('gives queue permissions to ingest only: consume the queue, send to the dead-letter queue', () => {
    expect(
      actionsOf('IngestRole')
        .filter((a) => a.startsWith('sqs:'))
        .sort(),
    ).toEqual([
      'sqs:ChangeMessageVisibility',
      'sqs:DeleteMessage',
      'sqs:GetQueueAttributes',
      'sqs:ReceiveMessage',
      'sqs:SendMessage',
    ]);
    const send = policyStatements('IngestRole').find((s) => s.Action === 'sqs:SendMessage');
    expect(send?.Resource).toEqual({ 'Fn::GetAtt': ['FramesDeadLetterQueue', 'Arn'] });
    expect(actionsOf('HealthRole').some((a) => a.startsWith('sqs:'))).toBe(false);
    expect(actionsOf('MigrateRole').some((a) => a.startsWith('sqs:'))).toBe(false);
  });

  it('R3-10: the scheduled OTLP export is off by default, reads only its own SSM parameters, and touches no queue', () => {
    const [, rule] = ofType('AWS::Events::Rule').find(([, r]) =>
      JSON.stringify(r.Properties.Targets).includes('Export'),
    )!;
    expect(rule.Properties.State).toBe('DISABLED');
    expect(rule.Properties.ScheduleExpression).toBe('rate(15 minutes)');
    const variables = resource('ExportLambdaFunction').Properties.Environment.Variables;
    expect(variables).toMatchObject({
      OTLP_ENDPOINT_SSM_PARAMETER: '/subagent-context/ci/otlp-endpoint',
      OTLP_HEADERS_SSM_PARAMETER: '/subagent-context/ci/otlp-headers',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    });
    const statements = policyStatements('ExportRole');
    const otlp = statements.find((s) => s.Sid === 'ReadOtlpParameters')!;
    expect(otlp.Action).toBe('ssm:GetParameter');
    expect(otlp.Resource.map((r: any) => r['Fn::Sub'])).toEqual([
      expect.stringMatching(/:parameter\/subagent-context\/ci\/otlp-endpoint$/),
      expect.stringMatching(/:parameter\/subagent-context\/ci\/otlp-headers$/),
    ]);
    const decrypt = statements.find((s) => s.Sid === 'DecryptOtlpHeaders')!;
    expect(decrypt.Condition.StringEquals['kms:EncryptionContext:PARAMETER_ARN']['Fn::Sub']).toMatch(/otlp-headers$/);
    expect(actionsOf('ExportRole').some((a) => a.startsWith('sqs:'))).toBe(false);
    expect(templateText).not.toMatch(/Export[A-Za-z]*EventSourceMapping/);
  });

  it('R5-6: the published report’s bucket blocks all public access, is encrypted with the project’s key and denies non-TLS requests', () => {
    const bucket = resource('PublishBucket').Properties;
    expect(bucket.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(bucket.BucketEncryption.ServerSideEncryptionConfiguration).toEqual([
      {
        ServerSideEncryptionByDefault: {
          SSEAlgorithm: 'aws:kms',
          KMSMasterKeyID: { 'Fn::GetAtt': ['AlarmTopicKey', 'Arn'] },
        },
        BucketKeyEnabled: true,
      },
    ]);
    const policy = resource('PublishBucketPolicy').Properties;
    expect(policy.Bucket).toEqual({ Ref: 'PublishBucket' });
    expect(policy.PolicyDocument.Statement).toEqual([
      {
        Sid: 'TlsOnly',
        Effect: 'Deny',
        Principal: '*',
        Action: 's3:*',
        Resource: [
          { 'Fn::GetAtt': ['PublishBucket', 'Arn'] },
          { 'Fn::Join': ['', [{ 'Fn::GetAtt': ['PublishBucket', 'Arn'] }, '/*']] },
        ],
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
      },
    ]);
  });

  it('R5-6: the lifecycle rule expires the dated copies (the tag the run puts on them) after 30 days, never latest/', () => {
    const rules = resource('PublishBucket').Properties.LifecycleConfiguration.Rules as Array<Record<string, any>>;
    const expiring = rules.filter((r) => r.ExpirationInDays !== undefined);
    const [key, value] = DATED_TAG.split('=');
    expect(expiring).toEqual([
      {
        Id: 'ExpireDatedCopies',
        Status: 'Enabled',
        Prefix: 'reports/',
        TagFilters: [{ Key: key, Value: value }],
        ExpirationInDays: PUBLISH_RETENTION_DAYS,
      },
    ]);
  });

  it('R5-6: the publish role may put objects under exactly its prefix, use the key through S3 only, and read only its own database parameter', () => {
    const statements = policyStatements('PublishRole');
    const s3 = statements.filter((s) => [s.Action].flat().some((a: string) => a.startsWith('s3:')));
    expect(s3).toEqual([
      {
        Sid: 'WriteUnderPrefix',
        Effect: 'Allow',
        Action: ['s3:PutObject', 's3:PutObjectTagging'],
        Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': ['PublishBucket', 'Arn'] }, '/reports/*']] },
      },
    ]);
    expect(statements.find((s) => s.Sid === 'EncryptReports')).toEqual({
      Sid: 'EncryptReports',
      Effect: 'Allow',
      Action: 'kms:GenerateDataKey',
      Resource: { 'Fn::GetAtt': ['AlarmTopicKey', 'Arn'] },
      // biome-ignore lint/suspicious/noTemplateCurlyInString: CloudFormation's own substitution
      Condition: { StringEquals: { 'kms:ViaService': { 'Fn::Sub': 's3.${AWS::Region}.amazonaws.com' } } },
    });
    expect(actionsOf('PublishRole').sort()).toEqual(
      [
        'kms:Decrypt',
        'kms:GenerateDataKey',
        'logs:CreateLogStream',
        'logs:PutLogEvents',
        's3:PutObject',
        's3:PutObjectTagging',
        'ssm:GetParameter',
      ].sort(),
    );
    // no other role touches the bucket
    for (const role of ['IngestRole', 'HealthRole', 'MigrateRole', 'ExportRole'])
      expect(
        actionsOf(role).some((a) => a.startsWith('s3:')),
        role,
      ).toBe(false);
  });

  it('R5-6: the scheduled publish is off by default, hourly, writes to the stack’s bucket, and a failed run alarms through the topic', () => {
    const [, rule] = ofType('AWS::Events::Rule').find(([, r]) =>
      JSON.stringify(r.Properties.Targets).includes('Publish'),
    )!;
    expect(rule.Properties.State).toBe('DISABLED');
    expect(rule.Properties.ScheduleExpression).toBe(PUBLISH_SCHEDULE);
    expect(resource('PublishLambdaFunction').Properties.Environment.Variables).toMatchObject({
      PUBLISH_BUCKET: { Ref: 'PublishBucket' },
      PUBLISH_PREFIX: 'reports',
    });
    expect(resource('PublishLambdaFunction').Properties.Timeout).toBe(PUBLISH_TIMEOUT_SECONDS);
    expect(resource('PublishErrorsAlarm').Properties).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: 'PublishLambdaFunction' } }],
      Statistic: 'Sum',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      AlarmActions: [{ Ref: 'AlarmTopic' }],
    });
    expect(template.Outputs?.PublishBucketName).toEqual({
      Description: expect.any(String),
      Value: { Ref: 'PublishBucket' },
    });
  });

  it('R5-6 / issue 57 #17: a failed scheduled publish is not retried by Lambda (no rerun writing more dated folders)', () => {
    const [, config] = ofType('AWS::Lambda::EventInvokeConfig').find(([, r]) =>
      JSON.stringify(r.Properties.FunctionName).includes('PublishLambdaFunction'),
    )!;
    expect(config.Properties.MaximumRetryAttempts).toBe(0);
  });

  it('tells ingest where the dead-letter queue is', () => {
    expect(resource('IngestLambdaFunction').Properties.Environment.Variables.DLQ_URL).toEqual({
      Ref: 'FramesDeadLetterQueue',
    });
  });
});

describe('the packaged function bundles', () => {
  it.each(['ingest', 'health', 'migrate'])('%s loads on Node without the native SQLite module', async (name) => {
    const dir = join(outDir, name);
    await run('unzip', ['-oq', join(outDir, `${name}.zip`), '-d', dir]);
    const { stdout } = await run(
      process.execPath,
      ['-e', `process.stdout.write(typeof require('./functions/${name}.js').handler)`],
      { cwd: dir },
    );
    expect(stdout).toBe('function');
  });

  it('migrate runs against PostgreSQL through the bundled Neon driver', async () => {
    const pg = await startEmbeddedPostgres();
    try {
      const db = openDatabase(pg.url, { wsProxy: pg.wsProxy });
      await createHostSchema(db);
      await db.close();
      const dir = join(outDir, 'migrate-run');
      await run('unzip', ['-oq', join(outDir, 'migrate.zip'), '-d', dir]);
      // exit once answered: like a frozen Lambda, the process does not wait for idle pooled connections
      const invoke = `require('./functions/migrate.js').handler({}).then((r) => { process.stdout.write(JSON.stringify(r)); process.exit(0); })`;
      // The bundle uses Node 22's global WebSocket (ws is not bundled); Node 20 has it behind a flag.
      const websocket = 'WebSocket' in globalThis ? [] : ['--experimental-websocket'];
      const { stdout } = await run(process.execPath, [...websocket, '-e', invoke], {
        cwd: dir,
        env: {
          PATH: process.env.PATH,
          DATABASE_URL: pg.url,
          DATABASE_WS_PROXY: pg.wsProxy,
          POWERTOOLS_LOG_LEVEL: 'ERROR',
          POWERTOOLS_METRICS_DISABLED: 'true',
        },
      });
      expect(JSON.parse(stdout)).toMatchObject({ backfill: 'completed', inserted: 0 });
      // minified, with the source map beside the bundle for NODE_OPTIONS=--enable-source-maps (issue 14)
      const { stdout: listing } = await run('unzip', ['-l', join(outDir, 'migrate.zip')]);
      expect(listing).toMatch(/functions\/migrate\.js\.map/);
    } finally {
      await pg.stop();
    }
  }, 60_000);
});
