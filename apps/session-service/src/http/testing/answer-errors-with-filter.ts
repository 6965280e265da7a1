/**
 * For specs: makes a bare Fastify app answer its errors with {@link ApiErrorFilter}, as the service
 * does (Nest's Fastify adapter: the filter's headers and body go on Fastify's reply).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ArgumentsHost } from '@nestjs/common';
import type { HttpAdapterHost } from '@nestjs/core';
import { ApiErrorFilter } from '../api-error.filter';
import { ReadModelsDamage } from '../../observability/read-models-damage';

/** Sets `app`'s error handler to an {@link ApiErrorFilter} on a stub of Nest's adapter (what the filter calls of it, on Fastify's reply). */
export function answerErrorsWithFilter(app: FastifyInstance): void {
  const filter = new ApiErrorFilter(
    {
      httpAdapter: {
        isHeadersSent: () => false,
        setHeader: (reply: FastifyReply, name: string, value: string) => reply.header(name, value),
        reply: (reply: FastifyReply, body: unknown, status: number) => reply.code(status).send(body),
      },
    } as unknown as HttpAdapterHost,
    new ReadModelsDamage('read-models.sqlite'),
  );
  app.setErrorHandler((error, request, reply) =>
    filter.catch(error, { switchToHttp: () => ({ getResponse: () => reply, getRequest: () => request }) } as unknown as ArgumentsHost),
  );
}
