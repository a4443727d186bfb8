/**
 * The HogQL syntax tree as `@posthog/hogql-parser` emits it (JSON, one object per node, named by
 * `node`). Only the fields the resolver and printer read are typed; anything else a node carries
 * is refused by name where it changes meaning (FINAL, WITH FILL, ...).
 */
export interface Position {
  offset: number;
}

interface Base {
  start?: Position;
  end?: Position;
}

export type Expr =
  | Constant
  | Field
  | Call
  | Alias
  | And
  | Or
  | Not
  | CompareOperation
  | ArithmeticOperation
  | BetweenExpr
  | Placeholder
  | TupleNode
  | ArrayNode
  | ArrayAccess
  | TupleAccess
  | Lambda
  | TypeCast
  | IsDistinctFrom
  | WindowFunction
  | OtherNode
  | SelectQuery
  | SelectSetQuery;

export interface Constant extends Base {
  node: 'Constant';
  value: string | number | boolean | null | ConstantValue[];
}
type ConstantValue = string | number | boolean | null | ConstantValue[];
export interface Field extends Base {
  node: 'Field';
  chain: (string | number)[];
}
export interface Call extends Base {
  node: 'Call';
  name: string;
  args: Expr[];
  params?: Expr[] | null;
  distinct?: boolean | null;
}
export interface Alias extends Base {
  node: 'Alias';
  alias: string;
  expr: Expr;
  hidden?: boolean;
}
export interface And extends Base {
  node: 'And';
  exprs: Expr[];
}
export interface Or extends Base {
  node: 'Or';
  exprs: Expr[];
}
export interface Not extends Base {
  node: 'Not';
  expr: Expr;
}
export interface CompareOperation extends Base {
  node: 'CompareOperation';
  op: string;
  left: Expr;
  right: Expr;
}
export interface ArithmeticOperation extends Base {
  node: 'ArithmeticOperation';
  op: string;
  left: Expr;
  right: Expr;
}
export interface BetweenExpr extends Base {
  node: 'BetweenExpr';
  expr: Expr;
  low: Expr;
  high: Expr;
  negated: boolean;
}
export interface Placeholder extends Base {
  node: 'Placeholder';
  expr: Expr;
}
export interface TupleNode extends Base {
  node: 'Tuple';
  exprs: Expr[];
}
export interface ArrayNode extends Base {
  node: 'Array';
  exprs: Expr[];
}
export interface ArrayAccess extends Base {
  node: 'ArrayAccess';
  array: Expr;
  property: Expr;
}
export interface TupleAccess extends Base {
  node: 'TupleAccess';
  tuple: Expr;
  index: number;
}
export interface Lambda extends Base {
  node: 'Lambda';
  args: string[];
  expr: Expr;
}
export interface TypeCast extends Base {
  node: 'TypeCast';
  expr: Expr;
  type_name: string;
}
export interface IsDistinctFrom extends Base {
  node: 'IsDistinctFrom';
  left: Expr;
  right: Expr;
  negated: boolean;
}
/** One end of a window frame: `n PRECEDING`, `UNBOUNDED FOLLOWING` (no value), `CURRENT ROW`. */
export interface WindowFrameExpr extends Base {
  node: 'WindowFrameExpr';
  frame_type: string;
  frame_value?: number | null;
}

/** What `OVER (...)` or `WINDOW name AS (...)` holds. */
export interface WindowExpr extends Base {
  node: 'WindowExpr';
  partition_by?: Expr[] | null;
  order_by?: OrderExpr[] | null;
  frame_method?: string | null;
  frame_start?: WindowFrameExpr | null;
  frame_end?: WindowFrameExpr | null;
}

/** `name(exprs) OVER (...)` or `OVER window_name`; `args` are a parametric aggregate's parameters. */
export interface WindowFunction extends Base {
  node: 'WindowFunction';
  name: string;
  exprs?: Expr[] | null;
  args?: Expr[] | null;
  over_expr?: WindowExpr | null;
  over_identifier?: string | null;
}

/** A node the printer does not support: refused with its name. */
export interface OtherNode extends Base {
  node: 'HogQLXTag' | 'Dict' | 'ExprCall' | 'SelectSetNode' | 'JoinExpr' | 'OrderExpr' | 'CTE';
}

export interface OrderExpr extends Base {
  node: 'OrderExpr';
  expr: Expr;
  order: 'ASC' | 'DESC';
  with_fill?: unknown;
}

export interface JoinConstraint extends Base {
  node: 'JoinConstraint';
  expr: Expr;
  constraint_type: 'ON' | 'USING';
}

export interface JoinExpr extends Base {
  node: 'JoinExpr';
  table: Field | SelectQuery | SelectSetQuery | Placeholder;
  table_args?: Expr[] | null;
  alias?: string | null;
  join_type?: string | null;
  constraint?: JoinConstraint | null;
  next_join?: JoinExpr | null;
  table_final?: boolean | null;
  sample?: SampleExpr | null;
}

/** `a` or `a/b` in a SAMPLE clause. */
export interface RatioExpr extends Base {
  node: 'RatioExpr';
  left: Constant;
  right?: Constant | null;
}

/** `SAMPLE 1/10 OFFSET 1/2`: the share of events, and where in the sampling key's range it starts. */
export interface SampleExpr extends Base {
  node: 'SampleExpr';
  sample_value: RatioExpr;
  offset_value?: RatioExpr | null;
}

export interface CTE extends Base {
  node: 'CTE';
  name: string;
  expr: Expr;
  cte_type: 'column' | 'subquery';
}

export interface LimitByExpr extends Base {
  node: 'LimitByExpr';
  n: Expr;
  offset_value?: Expr | null;
  exprs: Expr[];
}

export interface SelectQuery extends Base {
  node: 'SelectQuery';
  ctes?: Record<string, CTE> | CTE[] | null;
  select: Expr[];
  distinct?: boolean | null;
  select_from?: JoinExpr | null;
  array_join_op?: string | null;
  array_join_list?: Expr[] | null;
  window_exprs?: Record<string, WindowExpr> | null;
  where?: Expr | null;
  prewhere?: Expr | null;
  having?: Expr | null;
  qualify?: Expr | null;
  group_by?: Expr[] | null;
  order_by?: OrderExpr[] | null;
  limit?: Expr | null;
  limit_by?: LimitByExpr | null;
  limit_with_ties?: boolean | null;
  offset?: Expr | null;
}

export interface SelectSetQuery extends Base {
  node: 'SelectSetQuery';
  initial_select_query: SelectQuery | SelectSetQuery;
  subsequent_select_queries: { node: 'SelectSetNode'; select_query: SelectQuery | SelectSetQuery; set_operator: string }[];
}

export type SelectLike = SelectQuery | SelectSetQuery;
