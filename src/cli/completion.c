/* completion.c: the bash completion script (`gpuimg --completion bash`), made from the
 * operation registry and the option tables, so that it names what --help names. */
#include "cli.h"

#include <string.h>

/* 1 when one of the first n operations has an option of that name. */
static int named_before(int n, const char *name)
{
  for (int i = 0; i < n; i++)
    if (gpuimg_options_find(gpuimg_ops[i]->options, name, strlen(name), 0))
      return 1;
  return 0;
}

/* Prints the table's options (" --name -x") that take a value (values 1), or all (values 0),
 * leaving out those that one of the first n operations has. */
static void print_names(FILE *f, const gpuimg_option_t *table, int values, int n)
{
  for (const gpuimg_option_t *o = table; o->long_name; o++) {
    if (!o->help || (values && o->kind == GPUIMG_OPTION_FLAG) || named_before(n, o->long_name))
      continue;
    fprintf(f, " --%s", o->long_name);
    if (o->short_name)
      fprintf(f, " -%c", o->short_name);
  }
}

/* "--name|-x) COMPREPLY=(... choices ...)" for the table's CHOICE options and those that
 * list their values. */
static void print_choices(FILE *f, const gpuimg_option_t *table, int n)
{
  for (const gpuimg_option_t *o = table; o->long_name; o++) {
    int choice = o->kind == GPUIMG_OPTION_CHOICE;
    char values[512];
    if (!o->help || (!choice && !o->values) || named_before(n, o->long_name))
      continue;
    fprintf(f, "    --%s", o->long_name);
    if (o->short_name)
      fprintf(f, "|-%c", o->short_name);
    fprintf(f, ")\n      COMPREPLY=($(compgen -W \"");
    for (int k = 0; choice && o->choices[k]; k++)
      fprintf(f, "%s%s", k ? " " : "", o->choices[k]);
    if (!choice)
      fputs(o->values(" ", " ", values, sizeof values), f);
    fprintf(f, "\" -- \"$cur\"))\n      return ;;\n");
  }
}

static void print_ops(FILE *f)
{
  for (int i = 0; gpuimg_ops[i]; i++)
    fprintf(f, "%s%s", i ? " " : "", gpuimg_ops[i]->name);
}

void gpuimg_cli_completion(FILE *f)
{
  fprintf(f, "# bash completion for gpuimg, printed by `gpuimg --completion bash` from its\n"
             "# operation and option tables. Use: source <(gpuimg --completion bash)\n"
             "_gpuimg()\n{\n"
             "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
             "  local ops=\"");
  print_ops(f);
  fprintf(f, "\"\n  local takes_value=\"");
  for (int i = 0; gpuimg_ops[i]; i++)
    print_names(f, gpuimg_ops[i]->options, 1, i);
  for (int t = 0; gpuimg_cli_tables[t]; t++)
    print_names(f, gpuimg_cli_tables[t], 1, 0);
  fprintf(f, " \"\n  case $prev in\n");
  for (int i = 0; gpuimg_ops[i]; i++)
    print_choices(f, gpuimg_ops[i]->options, i);
  for (int t = 0; gpuimg_cli_tables[t]; t++)
    print_choices(f, gpuimg_cli_tables[t], 0);
  fprintf(f, "  esac\n"
             "  if [[ $takes_value == *\" $prev \"* ]]; then\n"
             "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
             "    return\n"
             "  fi\n"
             "  local op= want_op=1 i w\n"
             "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
             "    w=${COMP_WORDS[i]}\n"
             "    if [[ $takes_value == *\" $w \"* ]]; then\n"
             "      ((i++))\n"
             "    elif [[ $w == then ]]; then\n"
             "      want_op=1\n"
             "    elif [[ $w != -* ]] && ((want_op)); then\n"
             "      op=$w want_op=0\n"
             "    fi\n"
             "  done\n"
             "  local opts=\"");
  for (int t = 0; gpuimg_cli_tables[t]; t++)
    print_names(f, gpuimg_cli_tables[t], 0, 0);
  fprintf(f, "\"\n  case $op in\n");
  for (int i = 0; gpuimg_ops[i]; i++) {
    fprintf(f, "    %s) opts+=\"", gpuimg_ops[i]->name);
    print_names(f, gpuimg_ops[i]->options, 0, 0);
    fprintf(f, "\" ;;\n");
  }
  fprintf(f, "  esac\n"
             "  if [[ $cur == -* ]]; then\n"
             "    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
             "  elif ((want_op)); then\n"
             "    ((COMP_CWORD == 1)) && ops+=\" compare info summary\"\n"
             "    COMPREPLY=($(compgen -W \"$ops\" -- \"$cur\"))\n"
             "  else\n"
             "    COMPREPLY=($(compgen -W then -- \"$cur\") $(compgen -f -- \"$cur\"))\n"
             "  fi\n"
             "}\n"
             "complete -o filenames -F _gpuimg gpuimg\n");
}
