/**
 * The only transfer coding the service reads is `chunked` (newcomer finding: a body sent with
 * `Transfer-Encoding: gzip, chunked` was read as if it were not compressed: Node's parser undoes the
 * chunking and leaves any other coding as it is, so gzip bytes were answered 400 `malformed_body`,
 * and plain JSON sent so was written). A request with any other transfer coding is answered 501
 * `unsupported_transfer_coding` before its body is read (RFC 9112 §6.1: a server that receives a
 * transfer coding it does not understand should answer 501), saying to compress with
 * `Content-Encoding` instead, which the service decodes (gzip, deflate, br; `json-body.ts`).
 * A `Transfer-Encoding` whose last coding is not `chunked`, or sent with `Content-Length`, never
 * gets here: Node's parser refuses it (400 `malformed_request`, `framework-answers.ts`).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { quoteInput } from '@lib/compaction';
import type { ApiErrorBody } from './api-error.filter';
import { answerBeforeBody, type DiscardLimits } from './early-answer';
import { markExpectedAnswer } from '../observability/request-log-level';

/**
 * Whether the service reads a body sent with `Transfer-Encoding: value`: no such header, or exactly
 * one coding, `chunked` (any case, surrounding spaces and empty list elements ignored; Node joins
 * several header lines with `, `, so `chunked` on two lines is two codings, as RFC 9112 §6.1 reads it).
 */
export function readsTransferEncoding(value: string | undefined): boolean {
  if (value === undefined) return true;
  const codings = value
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '');
  return codings.length === 1 && codings[0] === 'chunked';
}

/** The 501 answer's body to a request sent with `Transfer-Encoding: value` (quoted in the message). */
export function unsupportedTransferCodingAnswer(value: string): ApiErrorBody {
  return {
    code: 'unsupported_transfer_coding',
    message: `Transfer-Encoding: ${quoteInput(value)} is not supported: the only transfer coding the service reads is chunked (Transfer-Encoding: chunked); to compress the body, send it with Content-Encoding: gzip (or deflate, br) instead`,
  };
}

/**
 * Fastify `onRequest` hook builder: answers 501 `unsupported_transfer_coding`
 * ({@link unsupportedTransferCodingAnswer}) to a request whose `Transfer-Encoding` names a coding
 * other than a lone `chunked` ({@link readsTransferEncoding}), on every route and method, before its
 * body is read: the body is discarded within `limits` and the connection closed after the answer
 * (`answerBeforeBody`). Nothing is written. Its request line logs at debug without an error, as a client's 4xx does.
 */
export function refuseTransferCodings(limits?: DiscardLimits) {
  return (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    const value = request.raw.headers['transfer-encoding'];
    if (readsTransferEncoding(value)) return done();
    // The client's fault, answered by design: its request line at debug without an error (a 5xx logs an error with a stack trace
    // otherwise: anyone could write error lines at will; newcomer ncfresh63 F1).
    markExpectedAnswer(reply.raw, 'debug');
    answerBeforeBody(request, reply, 501, unsupportedTransferCodingAnswer(value ?? ''), limits);
  };
}
