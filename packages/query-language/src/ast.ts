/** The expression subset the events endpoint's `select` and `where` accept. */
export type Expr =
  | { kind: 'literal'; value: string | number | boolean | null }
  | { kind: 'field'; path: string[] }
  | { kind: 'call'; name: string; args: Expr[] }
  | { kind: 'unary'; op: '-' | 'not'; arg: Expr }
  | { kind: 'binary'; op: BinaryOp; left: Expr; right: Expr }
  | { kind: 'array'; items: Expr[] };

export type BinaryOp =
  | 'and' | 'or'
  | '=' | '!=' | '<' | '<=' | '>' | '>='
  | 'like' | 'not like' | 'ilike' | 'not ilike' | 'in' | 'not in'
  | '+' | '-' | '*' | '/' | '%';
