; Inno Setup 6 script: a per-user (or, if chosen, all-users) installer for the Tebiki bundle.
;
; Build the one-dir bundle first, then compile this script on Windows:
;   py packaging\build.py                      (runs iscc itself when it is on PATH or ISCC is set)
;   iscc /DAppVersion=0.1.0 packaging\windows\tebiki.iss
; Output: dist\tebiki-<version>-windows-x64-setup.exe
;
; BundleDir, OutputDir and AppVersion can be overridden with /D; relative paths are relative to
; this file.

#ifndef AppVersion
  #define AppVersion "0.1.0"
#endif
#ifndef BundleDir
  #define BundleDir "..\..\dist\tebiki"
#endif
#ifndef OutputDir
  #define OutputDir "..\..\dist"
#endif
#define AppName "Tebiki"
#define AppExe "tebiki.exe"

[Setup]
; Never change AppId: Windows uses it to find the installed version to upgrade or uninstall.
AppId={{642BC324-CE27-411A-96F2-E18B7EEFD45B}
AppName={#AppName}
AppVersion={#AppVersion}
AppVerName={#AppName} {#AppVersion}
AppPublisher=Tebiki contributors
AppComments=Desktop AI agent workbench: Claude with tools, gated by your permission rules
VersionInfoVersion={#AppVersion}
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
DisableProgramGroupPage=yes
; No admin rights needed: installs for the current user unless the person picks "all users".
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
MinVersion=10.0
OutputDir={#OutputDir}
OutputBaseFilename=tebiki-{#AppVersion}-windows-x64-setup
SetupIconFile=..\..\resources\icons\tebiki.ico
UninstallDisplayIcon={app}\{#AppExe}
UninstallDisplayName={#AppName}
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
CloseApplications=yes

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[InstallDelete]
; An upgrade replaces the whole runtime folder, so no module of the old version lingers.
Type: filesandordirs; Name: "{app}\_internal"

[Files]
Source: "{#BundleDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\{#AppName}"; Filename: "{app}\{#AppExe}"; Comment: "Desktop AI agent workbench"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\{#AppExe}"; Tasks: desktopicon

[Run]
Filename: "{app}\{#AppExe}"; Description: "{cm:LaunchProgram,{#AppName}}"; Flags: nowait postinstall skipifsilent

; The user's data (%LOCALAPPDATA%\Tebiki) and keyring entries are deliberately left on uninstall.
