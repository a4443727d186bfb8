import { PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { CheckedHttpAgent, CheckedHttpsAgent } from '../destination-address/pinned-agents.js';
import { DestinationRefused } from '../destination-address/destination-refused.js';
import type { DestinationGuard } from '../destination-address/destination-guard.js';
import { EVENT_FILTER_SCHEMA_PROPERTIES, encodedEventFilter, eventFilter, type EventFilterConfig } from './event-filter.js';
import { encodeFiles, encodeLineFiles } from './export-files.js';
import { ExportError, NonRetryableExportError, describeCause } from './export-error.js';
import type { Destination, ExportPart, WriteResult } from './export-part.js';
import { COMPRESSION_EXTENSIONS, FILE_FORMAT_EXTENSIONS, PREFIX_PATTERN, s3Key, type Compression, type FileFormat } from './s3-key.js';

/** PostHog's S3 batch export config (`S3BatchExportInputs`), field for field. */
export interface S3DestinationConfig extends EventFilterConfig {
  bucket_name: string;
  region: string;
  /** A key prefix, with template variables (see s3-key.ts). */
  prefix: string;
  /** Both or neither; neither uses the AWS SDK's default credential chain. */
  aws_access_key_id: string | null;
  aws_secret_access_key: string | null;
  /** An S3-compatible server instead of AWS. */
  endpoint_url: string | null;
  compression: Compression | null;
  file_format: FileFormat;
  /** Splits a part's output into objects of about this size. */
  max_file_size_mb: number | null;
  /** Bucket in the host name; otherwise in the path where a custom endpoint is set (S3Proxy, MinIO). */
  use_virtual_style_addressing: boolean;
  /** Server-side encryption of each object. */
  encryption: 'AES256' | 'aws:kms' | null;
  kms_key_id: string | null;
}

export const S3_CONFIG_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['bucket_name', 'region'],
  properties: {
    bucket_name: { type: 'string', minLength: 1 },
    region: { type: 'string', minLength: 1 },
    prefix: { type: 'string', pattern: PREFIX_PATTERN, default: '' },
    aws_access_key_id: { type: 'string', nullable: true, default: null },
    aws_secret_access_key: { type: 'string', nullable: true, default: null },
    endpoint_url: { type: 'string', nullable: true, pattern: '^https?://', default: null },
    compression: { type: 'string', nullable: true, enum: [...Object.keys(COMPRESSION_EXTENSIONS), null], default: null },
    file_format: { type: 'string', enum: Object.keys(FILE_FORMAT_EXTENSIONS), default: 'JSONLines' },
    max_file_size_mb: { type: 'integer', nullable: true, minimum: 1, default: null },
    use_virtual_style_addressing: { type: 'boolean', default: false },
    encryption: { type: 'string', nullable: true, enum: ['AES256', 'aws:kms', null], default: null },
    kms_key_id: { type: 'string', nullable: true, default: null },
    ...EVENT_FILTER_SCHEMA_PROPERTIES,
  },
} as const;

const CONTENT_TYPES: Record<FileFormat, string> = { JSONLines: 'application/jsonl', Parquet: 'application/vnd.apache.parquet' };

/** Writes each part as one or more objects whose keys are a function of the window, part and file (s3-key.ts). */
export class S3Destination implements Destination {
  private readonly client: S3Client;
  private readonly name: string;
  // JSON lines are what ClickHouse can write for it; parsing rows only to write them again as
  // lines was most of an export's time.
  readonly takesEncodedEvents: boolean;

  constructor(
    private readonly config: S3DestinationConfig,
    guard: DestinationGuard,
  ) {
    this.takesEncodedEvents = config.file_format === 'JSONLines';
    this.name = `S3 bucket "${config.bucket_name}"${config.endpoint_url ? ` at ${config.endpoint_url}` : ''}`;
    const { aws_access_key_id: accessKeyId, aws_secret_access_key: secretAccessKey } = config;
    this.client = new S3Client({
      region: config.region,
      endpoint: config.endpoint_url ?? undefined,
      forcePathStyle: config.endpoint_url !== null && !config.use_virtual_style_addressing,
      credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : undefined,
      // Every connection, to AWS or to endpoint_url (with the bucket in the host name or not), goes
      // to an address the guard accepted for it.
      requestHandler: new NodeHttpHandler({ httpAgent: new CheckedHttpAgent(guard, { keepAlive: true }), httpsAgent: new CheckedHttpsAgent(guard, { keepAlive: true }) }),
      // Checksums only where S3 requires them: S3-compatible servers do not all accept the
      // streamed trailing checksums the SDK sends by default.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  async write(part: ExportPart): Promise<WriteResult> {
    const { config } = this;
    const options = {
      model: part.model,
      fileFormat: config.file_format,
      compression: config.compression,
      maxFileBytes: config.max_file_size_mb === null ? null : config.max_file_size_mb * 1024 * 1024,
    };
    let records: number;
    let files: Buffer[];
    if (part.encoded) {
      const lines = part.encoded.filter(encodedEventFilter(config)).map((event) => event.line);
      records = lines.length;
      files = await encodeLineFiles(lines, options);
    } else {
      const kept = part.records.filter(eventFilter(part.model, config));
      records = kept.length;
      files = await encodeFiles(kept, options);
    }
    const keys = files.map((_, file) => {
      try {
        return s3Key({ prefix: config.prefix, model: part.model, window: part.window, part: part.index, file, fileFormat: config.file_format, compression: config.compression });
      } catch (error) {
        throw new NonRetryableExportError(this.name, describeCause(error), { cause: error });
      }
    });
    await Promise.all(files.map((body, file) => this.put(keys[file]!, body)));
    return { records, bytes: files.reduce((sum, body) => sum + body.length, 0) };
  }

  private async put(key: string, body: Buffer): Promise<void> {
    const { config } = this;
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: config.bucket_name,
          Key: key,
          Body: body,
          ContentType: CONTENT_TYPES[config.file_format],
          ServerSideEncryption: config.encryption ?? undefined,
          SSEKMSKeyId: config.kms_key_id ?? undefined,
        }),
      );
    } catch (error) {
      throw this.failure(error);
    }
  }

  /** S3's 4xx answers (no such bucket, bad credentials, access denied) are final, except timeouts and throttling. */
  private failure(error: unknown): ExportError {
    if (error instanceof DestinationRefused) return new NonRetryableExportError(this.name, `refused: ${error.message}`, { cause: error });
    if (error instanceof S3ServiceException) {
      const status = error.$metadata.httpStatusCode ?? 0;
      const cause = `${error.name} (status ${status}): ${error.message}`;
      const final = status >= 400 && status < 500 && status !== 408 && status !== 429;
      return final ? new NonRetryableExportError(this.name, cause, { cause: error }) : new ExportError(this.name, cause, { cause: error });
    }
    return new ExportError(this.name, describeCause(error), { cause: error });
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}
