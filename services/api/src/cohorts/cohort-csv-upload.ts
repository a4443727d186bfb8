import type { RequestHandler } from 'express';
import multer from 'multer';
import { afterBody, badRequest, payloadTooLarge, type HttpError } from '@tributary/http';

/** A static cohort's CSV of at most 5 MB: some 100,000 emails, more than one insert should take. */
export const MAX_CSV_BYTES = 5 * 1024 * 1024;

// One file, in the `csv` field, beside a few short text fields (name, description, is_static).
const upload = multer({ storage: multer.memoryStorage(), limits: { fileSize: MAX_CSV_BYTES, files: 1, fields: 10, fieldSize: 64 * 1024, parts: 12 } }).single('csv');

/** The cohort create and update routes, below `/api`: the only ones that take a form. */
const COHORT_WRITE = /^\/(projects|environments)\/[^/]+\/cohorts(\/[^/]+)?\/?$/;

function uploadError(error: unknown): HttpError {
  if (error instanceof multer.MulterError) {
    if (error.code === 'LIMIT_FILE_SIZE') return payloadTooLarge(`csv: the file is larger than ${MAX_CSV_BYTES / 1024 / 1024} MB.`);
    return badRequest(`${error.message}${error.field ? `: ${error.field}` : ''}. Send one file, in the csv field.`, error.field ?? 'csv');
  }
  // Busboy's refusals of a malformed form ("Unexpected end of form", "Malformed part header").
  return badRequest(`The multipart form could not be read: ${(error as Error).message}.`, 'csv');
}

/**
 * Reads a multipart form sent to a cohort's create or update (PostHog's CSV upload: the file in
 * `csv`, the cohort's fields beside it) into `req.file` and `req.body`, before `jsonBodiesOnly`,
 * which answers any other form with a 415. A refused form's body is let through first (see afterBody).
 */
export function cohortCsvUploads(): RequestHandler {
  return (req, res, next) => {
    if ((req.method !== 'POST' && req.method !== 'PATCH') || !COHORT_WRITE.test(req.path) || !req.is('multipart/form-data')) return next();
    upload(req, res, (error: unknown) => {
      if (error === undefined || error === null) return next();
      const refusal = uploadError(error);
      if (req.readableEnded) return next(refusal);
      afterBody(req, () => next(refusal));
    });
  };
}
