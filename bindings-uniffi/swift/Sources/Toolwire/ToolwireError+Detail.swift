// The text of any ToolwireError case, as Kotlin's `ToolwireException.detail`.
extension ToolwireError {
    public var detail: String {
        switch self {
        case .Registration(let detail), .Capability(let detail), .Timeout(let detail),
            .Cancelled(let detail), .Closed(let detail), .Transport(let detail),
            .Busy(let detail), .InvalidArgument(let detail), .Handler(let detail), .NotFound(let detail),
            .Internal(let detail):
            return detail
        case .Client(_, let detail, _), .Protocol(_, let detail, _), .Rpc(_, let detail, _):
            return detail
        case .InputRequired(let detail, _, _):
            return detail
        }
    }
}
