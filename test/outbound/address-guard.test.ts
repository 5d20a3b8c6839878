import { describe, expect, it } from 'vitest';
import { isAllowedAddress, isPublicAddress, parseNetworks } from '../../src/outbound/address-guard';

describe('address guard', () => {
  it('counts global unicast addresses as public', () => {
    for (const a of ['8.8.8.8', '93.184.216.34', '2606:4700::1', '2a00:1450:4001::1', '::ffff:8.8.8.8']) expect(isPublicAddress(a), a).toBe(true);
  });

  it('refuses every special-purpose range of the IANA registries, not a hand list', () => {
    const nonPublic = [
      '0.0.0.0', '10.1.2.3', '100.64.0.1', '127.0.0.1', '169.254.169.254', '172.20.0.1', '192.0.0.8', '192.0.2.1', '192.31.196.1',
      '192.52.193.1', '192.88.99.1', '192.168.1.1', '192.175.48.1', '198.18.0.1', '198.51.100.1', '203.0.113.1', '224.0.0.1', '240.0.0.1', '255.255.255.255',
      '::', '::1', '::7f00:1', '::127.0.0.1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '64:ff9b::a00:1', '64:ff9b:1::1',
      '100::1', '2001::1', '2001:2::1', '2001:db8::1', '2001:10::1', '2001:20::1', '2002::1', '2002:c0a8:101::1', '3fff::1', '5f00::1',
      'fc00::1', 'fd12::1', 'fe80::1', 'fec0::1', 'ff02::1', '4000::1',
    ];
    for (const a of nonPublic) expect(isPublicAddress(a), a).toBe(false);
  });

  it('reads no odd IPv4 spellings as addresses', () => {
    for (const a of ['2130706433', '0x7f.1', '127.1', 'example.com']) expect(isPublicAddress(a), a).toBe(false);
  });

  it('allows the configured networks and only them', () => {
    const policy = { allowedNetworks: parseNetworks('127.0.0.0/8, ::1/128') };
    expect(isAllowedAddress('127.0.0.1', policy)).toBe(true);
    expect(isAllowedAddress('127.8.9.10', policy)).toBe(true);
    expect(isAllowedAddress('::ffff:127.0.0.1', policy)).toBe(true);
    expect(isAllowedAddress('::1', policy)).toBe(true);
    expect(isAllowedAddress('8.8.8.8', policy)).toBe(true);
    for (const a of ['10.0.0.1', '169.254.169.254', '::7f00:1', '2002:7f00:1::', 'fe80::1', '::2']) expect(isAllowedAddress(a, policy), a).toBe(false);
    expect(() => parseNetworks('10.0.0.0/33')).toThrow(/SHIPHOOK_WEBHOOK_ALLOWED_NETWORKS/);
    expect(() => parseNetworks('intranet')).toThrow(/not a CIDR/);
  });
});
