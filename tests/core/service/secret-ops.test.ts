/**
 * A key is checked for its shape before it is sent anywhere (issue 38, item 10): what is no OpenRouter key at all is
 * refused locally, with where to find one, and OpenRouter is never asked about it; a key of the right shape is asked.
 */
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../src-main/contract/index.js';
import type { SecretKind } from '../../../src-main/contract/index.js';
import { storeSecret } from '../../../src-main/core/service/secret-ops.js';
import type { SecretOpsDeps } from '../../../src-main/core/service/secret-ops.js';

function deps(): SecretOpsDeps & { asked: string[]; stored: string[] } {
  const asked: string[] = [];
  const stored: string[] = [];
  return {
    asked,
    stored,
    client: {
      getKeyInfo: (key: string) => {
        asked.push(key);
        return Promise.resolve({} as never);
      },
      getCredits: (key: string) => {
        asked.push(key);
        return Promise.resolve({} as never);
      },
    },
    secrets: {
      set: (_kind: SecretKind, value: string) => void stored.push(value),
      remove: () => undefined,
      status: () => ({}) as never,
    },
  };
}

describe('storeSecret', () => {
  it.each(['hello', 'openrouter-delegate key set', 'sk-ant-api03-abcdef', 'sk-or-v1-abc def', 'sk-or-', `sk-or-v1-${'é'.repeat(10)}`])(
    'refuses %j before anything is sent or stored',
    async (value) => {
      const d = deps();
      const refused = storeSecret(d, 'api', value, true);
      await expect(refused).rejects.toBeInstanceOf(ServiceError);
      await expect(refused).rejects.toThrow(
        /That is not an OpenRouter key: OpenRouter's keys begin with "sk-or-".*openrouter\.ai\/settings\/keys\. Nothing was sent or stored\./,
      );
      expect(d.asked).toEqual([]);
      expect(d.stored).toEqual([]);
    },
  );

  it('says where a management key comes from', async () => {
    await expect(storeSecret(deps(), 'management', 'not a key', true)).rejects.toThrow(/not a management key.*management-keys/);
  });

  it('asks OpenRouter about a key of the right shape, then stores it', async () => {
    const d = deps();
    const key = `sk-or-v1-${'0123456789abcdef'.repeat(4)}`;
    await storeSecret(d, 'api', key, true);
    expect(d.asked).toEqual([key]);
    expect(d.stored).toEqual([key]);
  });
});
