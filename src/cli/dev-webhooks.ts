import { LOOPBACK_NETWORKS } from '../config';
import { isAllowedAddress, isIpLiteral, isPublicAddress, parseNetworks } from '../outbound/address-guard';

/**
 * The webhook settings `shiphook dev` gives its processes: receivers on this
 * machine over http (127.0.0.0/8, ::1) while the API listens on loopback only.
 * When the API is reachable from other machines, anyone with a key could aim
 * webhooks at this machine's own services: then dev keeps production's rules and
 * refuses to start if loopback was allowed explicitly.
 */
export function devWebhookEnv(host: string, env: NodeJS.ProcessEnv): Record<string, string> {
  const loopbackApi = host === 'localhost' || isLoopbackAddress(host);
  const networks = env.SHIPHOOK_WEBHOOK_ALLOWED_NETWORKS ?? (loopbackApi ? LOOPBACK_NETWORKS : '');
  const allowHttp = env.SHIPHOOK_WEBHOOK_ALLOW_HTTP ?? (loopbackApi ? 'true' : 'false');
  const policy = { allowedNetworks: parseNetworks(networks) };
  if (!loopbackApi && (isAllowedAddress('127.0.0.1', policy) || isAllowedAddress('::1', policy))) {
    throw new Error(`shiphook dev: the API listens on ${host}, reachable from other machines, so webhooks may not reach loopback; unset SHIPHOOK_WEBHOOK_ALLOWED_NETWORKS or bind HOST=127.0.0.1`);
  }
  return { SHIPHOOK_WEBHOOK_ALLOWED_NETWORKS: networks, SHIPHOOK_WEBHOOK_ALLOW_HTTP: allowHttp };
}

const LOOPBACK = { allowedNetworks: parseNetworks(LOOPBACK_NETWORKS) };
const isLoopbackAddress = (host: string) => isIpLiteral(host) && isAllowedAddress(host, LOOPBACK) && !isPublicAddress(host);
