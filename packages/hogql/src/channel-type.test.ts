import { CHANNEL_TYPES, classifyChannel, sitePattern } from './channel-type.js';
import { CHANNEL_CASES, inputsOf } from '../test/channel-cases.js';

describe('classifyChannel follows PostHog\'s default channel rules', () => {
  it.each(CHANNEL_CASES)('%s', (_name, inputs, expected) => {
    expect(classifyChannel(inputsOf(inputs))).toBe(expected);
  });

  it('gives only channel types PostHog names', () => {
    for (const [, inputs] of CHANNEL_CASES) expect(CHANNEL_TYPES).toContain(classifyChannel(inputsOf(inputs)));
  });
});

describe('sitePattern', () => {
  const pattern = new RegExp(sitePattern(['google', 't']));
  it.each([['google', true], ['www.google.com', true], ['google.co.uk', true], ['t.co', true], ['googleblog.com', false], ['notgoogle.com', false], ['google.example.website', false]])('%s: %s', (value, matches) => {
    expect(pattern.test(value)).toBe(matches);
  });
});
