import type { ChannelAdapter, ChannelName } from '../adapter.js';
import { messagingA } from './messaging-a.js';
import { messagingB } from './messaging-b.js';
import { messagingC } from './messaging-c.js';
import { socialA, socialB } from './meta-messaging.js';

/** One adapter per channel value (CONTRACT §17). */
export const ADAPTERS: Record<ChannelName, ChannelAdapter> = {
  messaging_a: messagingA,
  messaging_b: messagingB,
  messaging_c: messagingC,
  social_a: socialA,
  social_b: socialB,
};
