//! The one table of the methods a client may call: each name, and what serves it.

/// A method a client may call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Method {
    Initialize,
    Ping,
    ToolsList,
    ToolsCall,
    LoggingSetLevel,
    ResourcesList,
    ResourceTemplatesList,
    ResourcesRead,
    ResourcesSubscribe,
    ResourcesUnsubscribe,
    PromptsList,
    PromptsGet,
    CompletionComplete,
    ServerDiscover,
    SubscriptionsListen,
    TasksGet,
    TasksUpdate,
    TasksCancel,
    SkillsList,
    SkillsGet,
    ResourcesDirectoryRead,
}

/// What a method belongs to: the session itself, or a capability the server offers only when
/// something of that kind is registered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Family {
    Lifecycle,
    Tools,
    Logging,
    Resources,
    Prompts,
    Completion,
    /// The Skills extension: offered when skills are registered.
    Skills,
}

impl Method {
    /// Every method, in the order of their metrics.
    pub(crate) const ALL: [Method; 21] = [
        Method::Initialize,
        Method::Ping,
        Method::ToolsList,
        Method::ToolsCall,
        Method::LoggingSetLevel,
        Method::ResourcesList,
        Method::ResourceTemplatesList,
        Method::ResourcesRead,
        Method::ResourcesSubscribe,
        Method::ResourcesUnsubscribe,
        Method::PromptsList,
        Method::PromptsGet,
        Method::CompletionComplete,
        Method::ServerDiscover,
        Method::SubscriptionsListen,
        Method::TasksGet,
        Method::TasksUpdate,
        Method::TasksCancel,
        Method::SkillsList,
        Method::SkillsGet,
        Method::ResourcesDirectoryRead,
    ];

    /// The method named `name`; `None` for a method this server does not know (-32601).
    pub(crate) fn parse(name: &str) -> Option<Method> {
        // tools/call first: it is most of the traffic.
        Some(match name {
            "tools/call" => Method::ToolsCall,
            "tools/list" => Method::ToolsList,
            "initialize" => Method::Initialize,
            "ping" => Method::Ping,
            "logging/setLevel" => Method::LoggingSetLevel,
            "resources/list" => Method::ResourcesList,
            "resources/templates/list" => Method::ResourceTemplatesList,
            "resources/read" => Method::ResourcesRead,
            "resources/subscribe" => Method::ResourcesSubscribe,
            "resources/unsubscribe" => Method::ResourcesUnsubscribe,
            "prompts/list" => Method::PromptsList,
            "prompts/get" => Method::PromptsGet,
            "completion/complete" => Method::CompletionComplete,
            "server/discover" => Method::ServerDiscover,
            "subscriptions/listen" => Method::SubscriptionsListen,
            "tasks/get" => Method::TasksGet,
            "tasks/update" => Method::TasksUpdate,
            "tasks/cancel" => Method::TasksCancel,
            "skills/list" => Method::SkillsList,
            "skills/get" => Method::SkillsGet,
            "resources/directory/read" => Method::ResourcesDirectoryRead,
            _ => return None,
        })
    }

    /// The method's name on the wire.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Method::Initialize => "initialize",
            Method::Ping => "ping",
            Method::ToolsList => "tools/list",
            Method::ToolsCall => "tools/call",
            Method::LoggingSetLevel => "logging/setLevel",
            Method::ResourcesList => "resources/list",
            Method::ResourceTemplatesList => "resources/templates/list",
            Method::ResourcesRead => "resources/read",
            Method::ResourcesSubscribe => "resources/subscribe",
            Method::ResourcesUnsubscribe => "resources/unsubscribe",
            Method::PromptsList => "prompts/list",
            Method::PromptsGet => "prompts/get",
            Method::CompletionComplete => "completion/complete",
            Method::ServerDiscover => "server/discover",
            Method::SubscriptionsListen => "subscriptions/listen",
            Method::TasksGet => "tasks/get",
            Method::TasksUpdate => "tasks/update",
            Method::TasksCancel => "tasks/cancel",
            Method::SkillsList => "skills/list",
            Method::SkillsGet => "skills/get",
            Method::ResourcesDirectoryRead => "resources/directory/read",
        }
    }

    pub(crate) fn family(self) -> Family {
        match self {
            Method::Initialize
            | Method::Ping
            | Method::ServerDiscover
            | Method::SubscriptionsListen => Family::Lifecycle,
            Method::ToolsList
            | Method::ToolsCall
            | Method::TasksGet
            | Method::TasksUpdate
            | Method::TasksCancel => Family::Tools,
            Method::LoggingSetLevel => Family::Logging,
            Method::ResourcesList
            | Method::ResourceTemplatesList
            | Method::ResourcesRead
            | Method::ResourcesSubscribe
            | Method::ResourcesUnsubscribe => Family::Resources,
            Method::PromptsList | Method::PromptsGet => Family::Prompts,
            Method::CompletionComplete => Family::Completion,
            Method::SkillsList | Method::SkillsGet | Method::ResourcesDirectoryRead => {
                Family::Skills
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Method;

    #[test]
    fn every_name_parses_back_to_its_method() {
        for method in Method::ALL {
            assert_eq!(Method::parse(method.name()), Some(method));
        }
        assert_eq!(Method::parse("tools/Call"), None);
        assert_eq!(Method::parse("server/Discover"), None);
    }
}
