/**
 * The `response_schema` contract check, shared by every check: validate a body, count the result,
 * log violations with their field paths. A violation fails the check only when it touches a field
 * the check needs (the caller decides, from the returned violations).
 */
import type { z } from 'zod';
import type { ApiResponse } from '../api/client.js';
import { validateResponse, type ResponseValidation } from '../api/validate.js';
import type { CheckContext } from './check.js';

/** Validates `response.body` against `schema` and records the contract check. */
export function checkResponseSchema<S extends z.ZodType>(
  ctx: CheckContext,
  schema: S,
  response: ApiResponse,
): ResponseValidation<z.infer<S>> {
  const validation = validateResponse(schema, response.body);
  if (validation.ok) {
    ctx.contract('response_schema', 'pass');
  } else {
    ctx.contract('response_schema', 'fail', validation.violations[0]?.path);
    ctx.log.warn(
      {
        operation: response.operation,
        statusCode: response.statusCode,
        violations: validation.violations.slice(0, 10),
      },
      'response does not match the API schema',
    );
  }
  if (validation.unknownFields.length > 0) {
    ctx.log.debug(
      { operation: response.operation, unknownFields: validation.unknownFields.slice(0, 20) },
      'response carries fields the API spec does not name',
    );
  }
  return validation;
}
