/**
 * Response bodies against the API spec, shared by every check: `validateBody` validates a body and
 * logs violations with their field paths; `checkResponseSchema` also counts the result as the
 * `response_schema` contract check. A violation fails the check only when it touches a field the
 * check needs (the caller decides, from the returned violations).
 */
import type { z } from 'zod';
import type { ApiResponse } from '../../api/client.js';
import { validateResponse, type ResponseValidation } from '../../api/validate.js';
import type { CheckContext } from '../../kernel/check.js';

/** Validates `response.body` against `schema` and logs what is wrong; counts nothing. */
export function validateBody<S extends z.ZodType>(
  ctx: CheckContext,
  schema: S,
  response: ApiResponse,
): ResponseValidation<z.infer<S>> {
  const validation = validateResponse(schema, response.body);
  if (!validation.ok) {
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

/** Validates `response.body` against `schema` and records the `response_schema` contract check. */
export function checkResponseSchema<S extends z.ZodType>(
  ctx: CheckContext,
  schema: S,
  response: ApiResponse,
): ResponseValidation<z.infer<S>> {
  const validation = validateBody(ctx, schema, response);
  if (validation.ok) ctx.contract('response_schema', 'pass');
  else ctx.contract('response_schema', 'fail', validation.violations[0]?.path);
  return validation;
}
