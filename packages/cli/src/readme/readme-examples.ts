/**
 * The README's shell examples, read from the file itself so that its test cannot drift from it.
 * Every ```sh block is an example to run, in order, in one shell, unless its info string says
 * `no-test` (a block that is a file's content, or needs a machine of its own, such as `make up`).
 * In a block, `#> ` lines are the output of the command before them: a line indented past `#> `
 * continues the one above (a long JSON line wrapped for reading), and `...` stands for any text,
 * which is how the README elides what legitimately varies (ids, keys, timestamps, dates).
 * Other `#` lines are prose.
 */
export interface ReadmeExample {
  /** The command as written, continuation lines included. */
  command: string;
  /** What it prints, `...` standing for any text; null when the README shows nothing. */
  expected: string | null;
  /** 1-based line of the README where the command starts. */
  line: number;
}

const FENCE = /^```(\S*)(.*)$/;

export function readmeExamples(markdown: string): ReadmeExample[] {
  const examples: ReadmeExample[] = [];
  let inBlock: 'run' | 'skip' | null = null;
  let pending: { lines: string[]; line: number; quote: Quote } | null = null;
  let expectedLines: string[] | null = null;
  const finishExpected = () => {
    if (expectedLines && examples.length > 0) examples[examples.length - 1]!.expected = expectedLines.join('\n');
    expectedLines = null;
  };
  markdown.split('\n').forEach((text, index) => {
    const fence = FENCE.exec(text);
    if (fence && inBlock === null) {
      inBlock = fence[1] === 'sh' && !/\bno-test\b/.test(fence[2]!) ? 'run' : 'skip';
      return;
    }
    if (fence && fence[1] === '' && fence[2] === '') {
      if (pending) throw new Error(`README line ${pending.line}: a command is not finished by the end of its block`);
      finishExpected();
      inBlock = null;
      return;
    }
    if (inBlock !== 'run') return;
    if (pending) {
      pending.lines.push(text);
      pending.quote = scan(text, pending.quote);
      if (pending.quote === 'none' && !continues(text)) {
        examples.push({ command: pending.lines.join('\n'), expected: null, line: pending.line });
        pending = null;
      }
      return;
    }
    const output = /^#>( ?)(.*)$/.exec(text);
    if (output) {
      if (examples.length === 0) throw new Error(`README line ${index + 1}: output with no command before it`);
      const [, space, rest] = output;
      expectedLines ??= [];
      if (space && /^\s/.test(rest!) && expectedLines.length > 0) expectedLines[expectedLines.length - 1] += rest!.trimStart();
      else expectedLines.push(rest!);
      return;
    }
    finishExpected();
    if (text.trim() === '' || text.trimStart().startsWith('#')) return;
    pending = { lines: [], line: index + 1, quote: 'none' };
    pending.lines.push(text);
    pending.quote = scan(text, 'none');
    if (pending.quote === 'none' && !continues(text)) {
      examples.push({ command: text, expected: null, line: index + 1 });
      pending = null;
    }
  });
  return examples;
}

type Quote = 'none' | 'single' | 'double';

/** The quoting a shell is in after this line, starting in `quote`; an unquoted ` #` starts a comment. */
function scan(line: string, quote: Quote): Quote {
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote === 'single') {
      if (c === "'") quote = 'none';
    } else if (c === '\\') {
      i++;
    } else if (quote === 'double') {
      if (c === '"') quote = 'none';
    } else if (c === "'") quote = 'single';
    else if (c === '"') quote = 'double';
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) break;
  }
  return quote;
}

/** A line ending in a backslash continues on the next one. */
function continues(line: string): boolean {
  return /\\$/.test(line);
}

/** Whether a command's output is what the README shows: `...` matches any text, the rest exactly. */
export function outputMatches(expected: string, actual: string): boolean {
  const pattern = expected
    .split('...')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[\\s\\S]*?');
  return new RegExp(`^${pattern}$`).test(actual.replace(/\s+$/, ''));
}
