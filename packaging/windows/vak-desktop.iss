; Inno Setup 6 script: the Windows installer for the one-folder bundle dist\vak-desktop\.
; Built by packaging/windows/build.sh (`make package` on Windows):
;   iscc /DAppVersion=VERSION /DSourceDir=...\dist\vak-desktop /DOutputDir=...\dist vak-desktop.iss
; Per-user install by default (no administrator needed; the dialog offers all users), a
; Start-menu entry, an optional desktop icon, `vak` on the user's PATH as an option, and an
; uninstaller (Settings > Apps) that removes what the installer added (the program, its
; shortcuts, and its folder from the user's PATH) but never the user's ledger or logs. The
; wizard shows LICENSE; LICENSE and THIRD-PARTY-NOTICES.txt are installed with the program.
; AppVersion is the bundle's `vak --version`, which is pyproject.toml's version.

#ifndef AppVersion
  #define AppVersion "0.0.0"
#endif
#ifndef SourceDir
  #define SourceDir "..\..\dist\vak-desktop"
#endif
#ifndef OutputDir
  #define OutputDir "..\..\dist"
#endif

[Setup]
AppId={{6F1C2B3A-8E4D-4F5A-9B6C-7D8E9F0A1B2C}
AppName=Vak
AppVersion={#AppVersion}
AppVerName=Vak {#AppVersion}
AppPublisher=Vak developers
AppPublisherURL=https://vakdesktop.org
DefaultDirName={autopf}\Vak
DefaultGroupName=Vak
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
OutputDir={#OutputDir}
OutputBaseFilename=vak-desktop-{#AppVersion}-windows-x64-setup
SetupIconFile=..\..\resources\icons\vak-desktop.ico
UninstallDisplayIcon={app}\vak-desktop.exe
UninstallDisplayName=Vak
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
ChangesEnvironment=yes
LicenseFile=..\..\LICENSE

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked
Name: "addtopath"; Description: "Add the vak command to PATH"; GroupDescription: "Command line:"; Flags: unchecked

[Files]
Source: "{#SourceDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{group}\Vak"; Filename: "{app}\vak-desktop.exe"; IconFilename: "{app}\vak-desktop.exe"; AppUserModelID: "org.vakdesktop.Vak"
Name: "{group}\Uninstall Vak"; Filename: "{uninstallexe}"
Name: "{autodesktop}\Vak"; Filename: "{app}\vak-desktop.exe"; Tasks: desktopicon

[Registry]
Root: HKCU; Subkey: "Environment"; ValueType: expandsz; ValueName: "Path"; ValueData: "{olddata};{app}"; Tasks: addtopath; Check: NeedsAddPath(ExpandConstant('{app}'))

[Run]
Filename: "{app}\vak-desktop.exe"; Description: "{cm:LaunchProgram,Vak}"; Flags: nowait postinstall skipifsilent

[UninstallDelete]
; what the program itself wrote into its folder (Python caches); the ledger and logs live in
; the user's data and log directories and stay
Type: filesandordirs; Name: "{app}\_internal\__pycache__"

[Code]
function NeedsAddPath(Dir: string): Boolean;
var
  Path: string;
begin
  if not RegQueryStringValue(HKEY_CURRENT_USER, 'Environment', 'Path', Path) then
  begin
    Result := True;
    exit;
  end;
  Result := Pos(';' + Uppercase(Dir) + ';', ';' + Uppercase(Path) + ';') = 0;
end;

// Uninstalling removes {app} from the user's PATH (the [Registry] line above only adds it).
procedure RemoveFromPath(Dir: string);
var
  Path, Upper, Entry: string;
  At: Integer;
begin
  if not RegQueryStringValue(HKEY_CURRENT_USER, 'Environment', 'Path', Path) then
    exit;
  Entry := ';' + Uppercase(Dir);
  Upper := ';' + Uppercase(Path) + ';';
  At := Pos(Entry + ';', Upper);
  if At = 0 then
    exit;
  Path := ';' + Path + ';';
  Delete(Path, At, Length(Entry));
  Path := Copy(Path, 2, Length(Path) - 2);
  RegWriteExpandStringValue(HKEY_CURRENT_USER, 'Environment', 'Path', Path);
end;

procedure CurUninstallStepChanged(CurUninstallStep: TUninstallStep);
begin
  if CurUninstallStep = usPostUninstall then
    RemoveFromPath(ExpandConstant('{app}'));
end;
