// One `import Switchyard` gives the whole embedded library: each layer is its own target (so the compiler keeps
// the layers in order) and this umbrella re-exports them.
@_exported import SwitchyardContext
@_exported import SwitchyardCoordinator
@_exported import SwitchyardLMDB
@_exported import SwitchyardMemory
@_exported import SwitchyardMigration
@_exported import SwitchyardModel
@_exported import SwitchyardModelFiles
@_exported import SwitchyardQuery
@_exported import SwitchyardSQLite
@_exported import SwitchyardSplit
@_exported import SwitchyardStores
