import { Flags } from '@oclif/core';
import { BaseCommand, remoteFlags } from '../../src/cli/base-command.js';
import { remoteClient, withLocalBackend } from '../../src/cli/backend.js';
import { errors } from '../../src/core/errors.js';
import { isUuid } from '../../src/core/ids.js';
import { retryDelivery, retryEndpointDeliveries } from '../../src/webhooks/deliveries.js';
import type { DeliveryOut, RetryResult } from '../../src/webhooks/schemas.js';

export default class WebhooksRetry extends BaseCommand {
  static override summary = 'Put failed or dead webhook deliveries back to pending for an immediate attempt';
  static override description = 'Either one delivery (--delivery ID) or every delivery of an endpoint in one status (--endpoint ID --status dead). Each starts a fresh retry ladder. Locally it needs --tenant; with --api-url and --token it goes through the REST API and the tenant is the token\'s.';
  static override examples = [
    '<%= config.bin %> webhooks retry --delivery 0193… --tenant acme',
    '<%= config.bin %> webhooks retry --endpoint 0193… --status dead --tenant acme --json',
    '<%= config.bin %> webhooks retry --endpoint 0193… --status dead --api-url https://help.acme.test --token hdk_…',
  ];

  static override flags = {
    delivery: Flags.string({ description: 'Delivery id', exclusive: ['endpoint'] }),
    endpoint: Flags.string({ description: 'Endpoint id (with --status)', dependsOn: ['status'] }),
    status: Flags.string({ description: 'Which deliveries of the endpoint', options: ['dead', 'failed'] }),
    tenant: Flags.string({ description: 'Tenant slug (local mode)' }),
    ...remoteFlags,
  };

  async run(): Promise<RetryResult> {
    const { flags } = await this.parse(WebhooksRetry);
    if (!flags.delivery && !flags.endpoint) throw errors.invalid('delivery', 'or --endpoint with --status is required');
    const status = flags.status as 'dead' | 'failed' | undefined;
    const client = remoteClient(flags);
    let result: RetryResult;
    if (client) {
      result = flags.delivery
        ? single(await client.request<DeliveryOut>('POST', `/webhook-deliveries/${encodeURIComponent(flags.delivery)}/retry`))
        : await client.request<RetryResult>('POST', `/webhook-endpoints/${encodeURIComponent(flags.endpoint!)}/deliveries/retry`, { status });
    } else {
      if (!flags.tenant) throw errors.invalid('tenant', 'is required without --api-url');
      const slug = flags.tenant;
      result = await withLocalBackend(async ({ tenant, inTenant }) => {
        const tenantId = (await tenant(slug)).id;
        return inTenant(tenantId, async (ctx) =>
          flags.delivery ? single(await retryDelivery(ctx, checkedId('delivery', flags.delivery))) : retryEndpointDeliveries(ctx, checkedId('endpoint', flags.endpoint!), status!));
      });
    }
    this.log(`${result.retried} deliver${result.retried === 1 ? 'y' : 'ies'} back to pending`);
    for (const id of result.delivery_ids) this.log(`  ${id}`);
    return result;
  }
}

function single(delivery: DeliveryOut): RetryResult {
  return { retried: 1, delivery_ids: [delivery.delivery_id] };
}

/** A malformed id is simply not found, as through the API. */
function checkedId(resource: 'delivery' | 'endpoint', id: string): string {
  if (!isUuid(id)) {
    throw errors.notFound(resource === 'delivery' ? 'webhook_delivery' : 'webhook_endpoint', id);
  }
  return id;
}
