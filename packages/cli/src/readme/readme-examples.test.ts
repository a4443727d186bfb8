import { outputMatches, readmeExamples } from './readme-examples.js';

const README = [
  'Some prose.',
  '',
  '```sh no-test',
  'make up',
  '```',
  '',
  '```sh',
  'source .tributary/credentials.env',
  'curl -s "$URL/capture/" -d "{',
  '  \\"event\\": \\"signed up\\", \\"note\\": \\"it\'s # not a comment\\"}"',
  '#> {"status":1}',
  '',
  '# Prose inside a block: it\'s not a command, and its quote opens nothing.',
  'q() { curl -s "$URL/query/" \\',
  "  -d \"$1\"; }   # a comment with an apostrophe: it's fine",
  "q '{\"query\": 1,",
  "    \"more\": 2}'",
  '#> {"results":[1,2],',
  '#>   "hogql":"..."}',
  '#> second line',
  '```',
  '',
  '```js',
  'posthog.init()',
  '```',
].join('\n');

describe('readmeExamples', () => {
  const examples = readmeExamples(README);

  it('takes the commands of sh blocks, not of no-test or other blocks, with the line each starts on', () => {
    expect(examples.map((e) => e.line)).toEqual([8, 9, 14, 16]);
    expect(examples[0]).toEqual({ command: 'source .tributary/credentials.env', expected: null, line: 8 });
  });

  it('keeps a command whole across an open quote, a trailing backslash and a shell function', () => {
    expect(examples[1]!.command.split('\n')).toHaveLength(2);
    expect(examples[2]!.command).toBe('q() { curl -s "$URL/query/" \\\n  -d "$1"; }   # a comment with an apostrophe: it\'s fine');
    expect(examples[3]!.command).toBe("q '{\"query\": 1,\n    \"more\": 2}'");
  });

  it('reads #> lines as the output of the command before them, an indented one continuing the line above', () => {
    expect(examples[1]!.expected).toBe('{"status":1}');
    expect(examples[3]!.expected).toBe('{"results":[1,2],"hogql":"..."}\nsecond line');
  });

  it('refuses output that follows no command, and a command its block leaves open', () => {
    expect(() => readmeExamples('```sh\n#> 1\n```')).toThrow(/line 2: output with no command/);
    expect(() => readmeExamples('```sh\ncurl -d "{\n```')).toThrow(/line 2: a command is not finished/);
  });
});

describe('outputMatches', () => {
  it('matches the rest exactly, ... standing for any text, trailing white space aside', () => {
    expect(outputMatches('{"id":"...","event":"signed up",...}', '{"id":"0190-ab","event":"signed up","x":[1]}\n')).toBe(true);
    expect(outputMatches('{"id":"...","event":"signed up",...}', '{"id":"0190-ab","event":"paid","x":[1]}')).toBe(false);
    expect(outputMatches('4328 demo events stored', '4328 demo events stored; more')).toBe(false);
    expect(outputMatches('a (b) $c [d]', 'a (b) $c [d]')).toBe(true);
    expect(outputMatches('one\n...', 'one\ntwo\nthree')).toBe(true);
  });
});
